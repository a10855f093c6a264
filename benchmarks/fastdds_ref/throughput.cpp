// A minimal Fast DDS throughput pair: the same-run reference for mwperf's fastdds transport in
// benchmarks/bench_throughput.py (built there with g++ against Debian's libfastrtps). Plain
// Fast DDS 2.x DDS API, no mwperf code; type and participant from ref_common.hpp. QoS as
// mwperf's transport maps its options: reliable = RELIABLE, KEEP_ALL with Fast DDS's default
// resource limits (a writer with 5000 unacknowledged samples blocks) and a 100 ms max_blocking_time; best-effort = BEST_EFFORT,
// KEEP_LAST DEPTH; synchronous publishing, preallocated-with-realloc history memory, no
// data-sharing.
//
//   throughput sub DOMAIN SHM(0|1) reliable|best-effort DEPTH [INTERVAL_MS]
//   throughput pub DOMAIN SHM(0|1) reliable|best-effort DEPTH SIZE SECONDS
//
// The publisher waits for the subscriber, writes SIZE-byte messages back to back for SECONDS
// (a reliable write that timed out on a full history is written again) and prints
// "sent msgs=N bytes=B seconds=S refused=R" (reliable: then waits up to 10 s for the
// acknowledgements of what is in flight). The subscriber takes every sample in a loop that
// waits for data when there is none, and every INTERVAL_MS (default 100) prints its running
// totals with the CLOCK_MONOTONIC time: "tp t_ns=T msgs=N bytes=B"; it runs until SIGTERM.
#include "ref_common.hpp"

#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

using namespace eprosima::fastdds::dds;
using Clock = std::chrono::steady_clock;

static std::atomic<bool> stop{false};
static void on_signal(int) { stop = true; }

static uint64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

template <class Q>
static void history(Q& q, bool reliable, int depth) {
    if (reliable) {
        q.history().kind = KEEP_ALL_HISTORY_QOS;  // Fast DDS's own resource limits (5000 samples)
    } else {
        q.history().kind = KEEP_LAST_HISTORY_QOS;
        q.history().depth = depth;
    }
    q.reliability().kind = reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    q.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    q.data_sharing().off();
}

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: throughput sub DOMAIN SHM reliable|best-effort DEPTH [INTERVAL_MS]\n"
                             "       throughput pub DOMAIN SHM reliable|best-effort DEPTH SIZE SECONDS\n");
        return 2;
    }
    std::string role = argv[1], delivery = argv[4];
    if (delivery != "reliable" && delivery != "best-effort") {
        std::fprintf(stderr, "throughput: '%s': reliable or best-effort\n", argv[4]);
        return 2;
    }
    bool reliable = delivery == "reliable";
    int depth = std::atoi(argv[5]);
    auto* part = make_participant(std::atoi(argv[2]), std::atoi(argv[3]) != 0);
    if (!part) {
        std::fprintf(stderr, "throughput: cannot create a participant\n");
        return 1;
    }
    auto* topic = part->create_topic("rt/mwperf/ref/thr", MsgType().getName(), TOPIC_QOS_DEFAULT);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    int status = 0;
    if (role == "sub") {
        uint64_t every = (argc > 6 ? std::strtoull(argv[6], nullptr, 10) : 100) * 1000000ull;
        DataReaderQos rq = DATAREADER_QOS_DEFAULT;
        history(rq, reliable, depth);
        auto* reader = part->create_subscriber(SUBSCRIBER_QOS_DEFAULT)->create_datareader(topic, rq);
        std::printf("READY\n");
        std::fflush(stdout);
        Msg m;
        SampleInfo info;
        uint64_t msgs = 0, bytes = 0, next = 0;
        while (!stop) {
            if (reader->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK) {
                if (info.valid_data) {
                    ++msgs;
                    bytes += m.data.size();
                }
            } else {
                reader->wait_for_unread_message(Duration_t(0, 10000000));
            }
            uint64_t now = monotonic_ns();
            if (now >= next) {
                std::printf("tp t_ns=%llu msgs=%llu bytes=%llu\n", (unsigned long long)now, (unsigned long long)msgs,
                            (unsigned long long)bytes);
                std::fflush(stdout);
                next = now + every;
            }
        }
    } else if (role == "pub" && argc >= 8) {
        size_t size = std::strtoul(argv[6], nullptr, 10);
        double seconds = std::atof(argv[7]);
        DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
        history(wq, reliable, depth);
        wq.reliability().max_blocking_time = Duration_t(0, 100000000);
        wq.publish_mode().kind = SYNCHRONOUS_PUBLISH_MODE;
        auto* writer = part->create_publisher(PUBLISHER_QOS_DEFAULT)->create_datawriter(topic, wq);
        PublicationMatchedStatus st;
        auto give_up = Clock::now() + std::chrono::seconds(15);
        do {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            writer->get_publication_matched_status(st);
        } while (st.current_count == 0 && Clock::now() < give_up);
        if (st.current_count == 0) {
            std::fprintf(stderr, "throughput: no subscriber matched in 15 s\n");
            status = 1;
        } else {
            std::printf("matched\n");
            std::fflush(stdout);
            Msg m;
            m.data.assign(size, 0x5a);
            uint64_t sent = 0, refused = 0, tries = 0;
            auto start = Clock::now();
            auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
            while (!stop) {
                m.id = sent + 1;
                m.time = static_cast<int64_t>(monotonic_ns());
                if (writer->write(&m)) {
                    ++sent;
                } else {
                    ++refused;  // a full reliable history for max_blocking_time: write it again
                }
                if ((++tries & 63) == 0 && Clock::now() >= end) break;
            }
            double took = std::chrono::duration<double>(Clock::now() - start).count();
            std::printf("sent msgs=%llu bytes=%llu seconds=%.6f refused=%llu\n", (unsigned long long)sent,
                        (unsigned long long)(sent * size), took, (unsigned long long)refused);
            std::fflush(stdout);
            writer->wait_for_acknowledgments(Duration_t(10, 0));  // reliable: what is in flight arrives
        }
    } else {
        std::fprintf(stderr, "throughput: pub needs SIZE and SECONDS\n");
        status = 2;
    }
    part->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(part);
    return status;
}
