// A ROS 2-style publisher in plain Fast DDS 2.x (no ROS 2, no rmw, no mwperf code): one topic
// rt/NAME of type std_msgs::msg::dds_::Header_ (stamp = the send time, CLOCK_REALTIME; frame_id
// padded to reach SIZE serialized bytes with the 4-byte CDR header) at HZ on absolute deadlines,
// with the QoS given. The Fast DDS peer of mwperf's ROS 2 probe tests (tests/ros2peers/):
// Fast DDS's discovery met from Cyclone DDS. The participant is ref_common.hpp's: UDPv4 on
// 127.0.0.1 with unicast discovery (initial peers 127.0.0.1, participant ids 0..99), which is what
// Cyclone's loopback configuration (peer 127.0.0.1, participant index auto) reaches; no shared
// memory (a Cyclone peer cannot use it). It announces no ROS 2 node (no ros_discovery_info).
//
//   rospub DOMAIN TOPIC HZ SECONDS reliable|best-effort volatile|transient-local DEPTH
//          [DEADLINE_MS (0 = infinite)] [SIZE (default 64)]
//
// stdout: "READY participant=<32 hex> writer=<32 hex>" once the writer exists, and at the end
// "sent N first_ns=T0 last_ns=T1" (CLOCK_REALTIME). SECONDS 0 = until SIGTERM/SIGINT.
#include "ref_common.hpp"

#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>

using namespace eprosima::fastdds::dds;

struct Header {
    int32_t sec = 0;
    uint32_t nanosec = 0;
    std::string frame_id;
};

class HeaderType : public TopicDataType {
public:
    HeaderType() {
        setName("std_msgs::msg::dds_::Header_");
        m_typeSize = 1 << 20;
        m_isGetKeyDefined = false;
    }
    bool serialize(void* d, eprosima::fastrtps::rtps::SerializedPayload_t* p) override {
        auto* h = static_cast<Header*>(d);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(p->data), p->max_size);
        eprosima::fastcdr::Cdr c(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN, eprosima::fastcdr::Cdr::DDS_CDR);
        p->encapsulation = c.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
        c.serialize_encapsulation();
        c << h->sec << h->nanosec << h->frame_id;
        p->length = static_cast<uint32_t>(c.getSerializedDataLength());
        return true;
    }
    bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* p, void* d) override {
        auto* h = static_cast<Header*>(d);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(p->data), p->length);
        eprosima::fastcdr::Cdr c(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN, eprosima::fastcdr::Cdr::DDS_CDR);
        c.read_encapsulation();
        c >> h->sec >> h->nanosec >> h->frame_id;
        return true;
    }
    std::function<uint32_t()> getSerializedSizeProvider(void* d) override {
        auto* h = static_cast<Header*>(d);
        uint32_t n = 4 + 8 + 4 + static_cast<uint32_t>(h->frame_id.size()) + 1 + 8;
        return [n]() { return n; };
    }
    void* createData() override { return new Header(); }
    void deleteData(void* d) override { delete static_cast<Header*>(d); }
    bool getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) override { return false; }
};

static std::atomic<bool> stop{false};
static void on_signal(int) { stop = true; }

static std::string hex(const eprosima::fastrtps::rtps::GUID_t& g) {
    std::string s;
    char b[3];
    for (auto o : g.guidPrefix.value) { std::snprintf(b, sizeof b, "%02x", o); s += b; }
    for (auto o : g.entityId.value) { std::snprintf(b, sizeof b, "%02x", o); s += b; }
    return s;
}

static int64_t realtime_ns() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char** argv) {
    if (argc < 8) {
        std::fprintf(stderr, "usage: rospub DOMAIN TOPIC HZ SECONDS reliable|best-effort "
                             "volatile|transient-local DEPTH [DEADLINE_MS] [SIZE]\n");
        return 2;
    }
    int domain = std::atoi(argv[1]);
    std::string name = argv[2], reliability = argv[5], durability = argv[6];
    double hz = std::atof(argv[3]), seconds = std::atof(argv[4]);
    int depth = std::atoi(argv[7]);
    double deadline_ms = argc > 8 ? std::atof(argv[8]) : 0;
    size_t size = argc > 9 ? std::strtoul(argv[9], nullptr, 10) : 64;
    if (hz <= 0 || depth < 1 || (reliability != "reliable" && reliability != "best-effort") ||
        (durability != "volatile" && durability != "transient-local")) {
        std::fprintf(stderr, "rospub: bad arguments\n");
        return 2;
    }
    auto* part = make_participant(domain, false);
    if (!part) {
        std::fprintf(stderr, "rospub: cannot create a participant\n");
        return 1;
    }
    TypeSupport type(new HeaderType());
    type.register_type(part);
    auto* topic = part->create_topic(name, type.get_type_name(), TOPIC_QOS_DEFAULT);
    DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
    wq.reliability().kind = reliability == "reliable" ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
    wq.durability().kind = durability == "volatile" ? VOLATILE_DURABILITY_QOS : TRANSIENT_LOCAL_DURABILITY_QOS;
    wq.history().kind = KEEP_LAST_HISTORY_QOS;
    wq.history().depth = depth;
    if (deadline_ms > 0) {
        auto ns = static_cast<int64_t>(deadline_ms * 1e6);
        wq.deadline().period = eprosima::fastrtps::Duration_t(static_cast<int32_t>(ns / 1000000000), static_cast<uint32_t>(ns % 1000000000));
    }
    wq.publish_mode().kind = SYNCHRONOUS_PUBLISH_MODE;
    wq.data_sharing().off();
    auto* writer = part->create_publisher(PUBLISHER_QOS_DEFAULT)->create_datawriter(topic, wq);
    if (!writer) {
        std::fprintf(stderr, "rospub: cannot create the writer\n");
        return 1;
    }
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    std::printf("READY participant=%s writer=%s\n", hex(part->guid()).c_str(), hex(writer->guid()).c_str());
    std::fflush(stdout);
    Header h;
    size_t base = 4 + 8 + 4 + 1;  // encapsulation, stamp, the string's length and its NUL
    h.frame_id.assign(size > base ? size - base : 0, 'f');
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    auto period = std::chrono::duration<double>(1.0 / hz);
    uint64_t sent = 0;
    int64_t first = 0, last = 0;
    for (uint64_t k = 0; !stop; ++k) {
        auto due = std::chrono::duration<double>(k * period.count());
        if (seconds > 0 && due.count() >= seconds) break;
        std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(due));
        int64_t now = realtime_ns();
        h.sec = static_cast<int32_t>(now / 1000000000);
        h.nanosec = static_cast<uint32_t>(now % 1000000000);
        if (writer->write(&h)) {
            if (!sent) first = now;
            last = now;
            ++sent;
        }
    }
    std::printf("sent %llu first_ns=%lld last_ns=%lld\n", (unsigned long long)sent, (long long)first, (long long)last);
    std::fflush(stdout);
    part->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(part);
    return 0;
}
