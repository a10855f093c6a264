// A minimal Fast DDS ping/pong: the same-run reference for mwperf's fastdds transport
// (benchmarks/bench_fastdds.py builds it against Debian's libfastrtps and runs it interleaved
// with mwperf). Written against the plain Fast DDS 2.x DDS API as its own examples are, sharing
// no code with mwperf: a type of the same layout (sequence<octet>, int64, uint64; the size of the
// whole mwperf message in `data`), the same QoS (reliable keep-last DEPTH, synchronous publish),
// the same transports (UDPv4 on 127.0.0.1 with unicast discovery, shared memory on or off).
//
// (Type and participant: ref_common.hpp.)
//
//   pingpong pong DOMAIN SHM(0|1)
//   pingpong ping DOMAIN SHM(0|1) SIZE RATE_HZ(0 = closed loop) SECONDS WARMUP_SECONDS [REPLY_WAIT_MS]
// ping prints one line: "count N p50_ns X p99_ns Y max_gap_ns G": G = the longest time between
// two replies in the measured phase (a restarted pong's rediscovery, within REPLY_WAIT_MS: how
// long the ping waits for each reply before it sends the next, default 1000).
#include "ref_common.hpp"

#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace eprosima::fastdds::dds;
using Clock = std::chrono::steady_clock;

static std::atomic<bool> stop{false};
static void on_signal(int) { stop = true; }

struct Node {
    DomainParticipant* part;
    DataWriter* writer;
    DataReader* reader;
};

static Node make(int domain, bool shm, const char* out, const char* in) {
    auto* part = make_participant(domain, shm);
    auto* wt = part->create_topic(out, MsgType().getName(), TOPIC_QOS_DEFAULT);
    auto* rt = part->create_topic(in, MsgType().getName(), TOPIC_QOS_DEFAULT);
    DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
    wq.reliability().kind = RELIABLE_RELIABILITY_QOS;
    wq.history().kind = KEEP_LAST_HISTORY_QOS;
    wq.history().depth = 1;
    wq.publish_mode().kind = SYNCHRONOUS_PUBLISH_MODE;
    wq.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    wq.data_sharing().off();
    DataReaderQos rq = DATAREADER_QOS_DEFAULT;
    rq.reliability().kind = RELIABLE_RELIABILITY_QOS;
    rq.history().kind = KEEP_LAST_HISTORY_QOS;
    rq.history().depth = 1;
    rq.endpoint().history_memory_policy = eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    rq.data_sharing().off();
    auto* w = part->create_publisher(PUBLISHER_QOS_DEFAULT)->create_datawriter(wt, wq);
    auto* r = part->create_subscriber(SUBSCRIBER_QOS_DEFAULT)->create_datareader(rt, rq);
    return {part, w, r};
}

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: pingpong pong|ping DOMAIN SHM [SIZE RATE SECONDS WARMUP]\n");
        return 2;
    }
    std::string role = argv[1];
    int domain = std::atoi(argv[2]);
    bool shm = std::atoi(argv[3]) != 0;
    const char* ping_topic = "rt/mwperf/ref/ping";
    const char* pong_topic = "rt/mwperf/ref/pong";
    Msg m;
    SampleInfo info;
    const Duration_t wait_slice(0, 50000000);
    if (role == "pong") {
        Node n = make(domain, shm, pong_topic, ping_topic);
        std::printf("READY\n");
        std::fflush(stdout);
        std::signal(SIGTERM, on_signal);
        std::signal(SIGINT, on_signal);
        while (!stop) {
            if (n.reader->take_next_sample(&m, &info) == ReturnCode_t::RETCODE_OK) {
                if (info.valid_data) n.writer->write(&m);
                continue;
            }
            n.reader->wait_for_unread_message(wait_slice);
        }
        n.part->delete_contained_entities();
        DomainParticipantFactory::get_instance()->delete_participant(n.part);
        return 0;
    }
    if (argc < 8) return 2;
    size_t size = std::strtoul(argv[4], nullptr, 10);
    double rate = std::atof(argv[5]);
    double seconds = std::atof(argv[6]), warmup = std::atof(argv[7]);
    long reply_wait_ms = argc > 8 ? std::atol(argv[8]) : 1000;
    Node n = make(domain, shm, ping_topic, pong_topic);
    PublicationMatchedStatus st;
    auto give_up = Clock::now() + std::chrono::seconds(15);
    do {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        n.writer->get_publication_matched_status(st);
    } while (st.current_count == 0 && Clock::now() < give_up);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the reverse direction too
    m.data.assign(size, 0x5a);
    std::vector<int64_t> rtt;
    rtt.reserve(static_cast<size_t>((rate > 0 ? rate : 100000) * seconds) + 16);
    auto start = Clock::now();
    auto measure_from = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup));
    auto end = measure_from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    auto period = rate > 0 ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate)) : Clock::duration(0);
    auto next = start;
    uint64_t seq = 0;
    Clock::time_point last_reply{};
    int64_t max_gap = 0;
    while (Clock::now() < end) {
        if (rate > 0) {
            std::this_thread::sleep_until(next);
            next += period;
        }
        auto t0 = Clock::now();
        m.id = ++seq;
        m.time = t0.time_since_epoch().count();
        n.writer->write(&m);
        Msg back;
        bool got = false;
        auto deadline = t0 + std::chrono::milliseconds(reply_wait_ms);
        while (!got && Clock::now() < deadline) {
            if (n.reader->take_next_sample(&back, &info) == ReturnCode_t::RETCODE_OK) {
                got = info.valid_data && back.id == seq;
                continue;
            }
            n.reader->wait_for_unread_message(Duration_t(0, 10000000));
        }
        auto t1 = Clock::now();
        if (got && t0 >= measure_from) {
            rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
            if (last_reply > Clock::time_point{})
                max_gap = std::max(max_gap, std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - last_reply).count());
            last_reply = t1;
        }
    }
    std::sort(rtt.begin(), rtt.end());
    auto pct = [&](double q) { return rtt.empty() ? 0 : rtt[std::min(rtt.size() - 1, static_cast<size_t>(q * rtt.size()))]; };
    std::printf("count %zu p50_ns %lld p99_ns %lld max_gap_ns %lld\n", rtt.size(), (long long)pct(0.50),
                (long long)pct(0.99), (long long)max_gap);
    n.part->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(n.part);
    return 0;
}
