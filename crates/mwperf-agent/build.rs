include!("../mwperf-core/build.rs");
