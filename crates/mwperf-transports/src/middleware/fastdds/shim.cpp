// mwperf's Fast DDS transport, C side: a small C ABI over the Fast DDS DDS API, compiled by
// build.rs against Debian's libfastrtps 2.9 into a shared object that the agent loads at run time
// (so an agent built with it still starts where Fast DDS is not installed), or on first use
// against a ROS 2 distribution's Fast DDS (2.14, 3.2: wheel.rs); what differs between those
// versions is in compat.hpp.
//
// A participant (mwfd_participant_open) holds the session-level settings (domain, transports,
// discovery peers, flow controller); an endpoint (mwfd_open) is a writer and/or a reader in one,
// each with its own publisher/subscriber and QoS. The Rust side gives each endpoint its own
// participant, or one shared by a graph node's endpoints. An endpoint has a writer and/or a reader of the
// ROS 2 type mwperf_msgs/msg/Bytes (DDS name mwperf_msgs::msg::dds_::Bytes_, XCDR1 like ROS 2
// Humble): sequence<octet> data; int64 time; uint64 id. The same type, topic names and CDR as the
// cyclonedds and rustdds transports, so they interoperate on the wire.
//
// Every function returns 0 (or a count) on success and a negative value on failure, with a
// human-readable reason in the caller's `err` buffer. C++ exceptions never cross the ABI.

#include "compat.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace eprosima::fastdds::dds;
using mwfd_rtps::IPLocator;
using mwfd_rtps::Locator_t;
using mwfd_rtps::GUID_t;
using mwfd_rtps::SampleIdentity;
using mwfd_rtps::SequenceNumber_t;
using mwfd_rtps::WriteParams;

namespace {

const char* const TYPE_NAME = "mwperf_msgs::msg::dds_::Bytes_";

// The ROS 2 service mwperf_msgs/srv/Bytes (uint8[] data --- uint8[] data): its request and
// response types, as rmw_fastrtps puts them on the wire (no header: requests and replies are
// matched by sample identities, see mwfd_write_related / mwfd_take_info).
const char* const REQUEST_TYPE_NAME = "mwperf_msgs::srv::dds_::Bytes_Request_";
const char* const RESPONSE_TYPE_NAME = "mwperf_msgs::srv::dds_::Bytes_Response_";

// The flow controller of a participant with a rate limit (max_bytes_per_s), used by its writers.
const char* const FLOW = "mwperf_rate_limit";

// What a writer hands to serialize(): the caller's bytes, not copied before serialization.
struct Outgoing {
    const uint8_t* data;
    uint32_t len;
    int64_t time;
    uint64_t id;
};

// What a reader deserializes into (reused between takes: no allocation once grown).
struct Incoming {
    std::vector<uint8_t> data;
    int64_t time = 0;
    uint64_t id = 0;
};

// Serialized size of an Outgoing: encapsulation 4, length 4, bytes, padding to 8 (relative to
// the end of the encapsulation), time 8, id 8.
uint32_t serialized_size(uint32_t len) {
    uint32_t body = 4 + len;
    body = (body + 7) & ~7u;
    return 4 + body + 16;
}

class BytesType : public mwfd_compat::CdrType {
public:
    BytesType() : CdrType(TYPE_NAME, serialized_size(64)) {}  // a small preallocation; payloads grow as needed

    void put(const void* data, eprosima::fastcdr::Cdr& ser) override {
        const Outgoing* o = static_cast<const Outgoing*>(data);
        ser.serialize(o->len);
        mwfd_compat::put_bytes(ser, o->data, o->len);
        ser.serialize(o->time);
        ser.serialize(o->id);
    }

    bool get(eprosima::fastcdr::Cdr& de, uint32_t len, void* data) override {
        Incoming* in = static_cast<Incoming*>(data);
        uint32_t n = 0;
        de.deserialize(n);
        if (n > len) return false;
        in->data.resize(n);
        mwfd_compat::get_bytes(de, in->data.data(), n);
        de.deserialize(in->time);
        de.deserialize(in->id);
        return true;
    }

    uint32_t size_of(const void* data) override {
        return serialized_size(static_cast<const Outgoing*>(data)->len);
    }

protected:
    void* create_sample() override { return new Incoming(); }
    void delete_sample(void* data) override { delete static_cast<Incoming*>(data); }
};

// A ROS 2 message type carried as the CDR the caller already wrote (mwperf's ros2 layouts,
// `--opt ros2-type`): serialize copies the Outgoing bytes (encapsulation header included) into
// the payload as they are, deserialize copies the whole payload into an Incoming's data. The
// type name is the ROS 2 DDS name (e.g. std_msgs::msg::dds_::UInt8MultiArray_), registered on
// first use in a participant.
class RawCdrType : public mwfd_compat::CdrType {
public:
    explicit RawCdrType(const char* name) : CdrType(name, 4 + 64) {}  // grows as needed

    void put(const void*, eprosima::fastcdr::Cdr&) override {}  // write_payload copies instead
    bool get(eprosima::fastcdr::Cdr&, uint32_t, void*) override { return false; }
    uint32_t size_of(const void* data) override { return static_cast<const Outgoing*>(data)->len; }

    bool write_payload(const void* data, mwfd_rtps::SerializedPayload_t& payload) override {
        const Outgoing* o = static_cast<const Outgoing*>(data);
        if (o->len < 4 || o->len > payload.max_size) return false;
        std::memcpy(payload.data, o->data, o->len);
        payload.length = o->len;
        payload.encapsulation = o->data[1] == 0 ? CDR_BE : CDR_LE;
        return true;
    }

    bool read_payload(mwfd_rtps::SerializedPayload_t& payload, void* data) override {
        Incoming* in = static_cast<Incoming*>(data);
        in->data.assign(payload.data, payload.data + payload.length);
        return true;
    }

protected:
    void* create_sample() override { return new Incoming(); }
    void delete_sample(void* data) override { delete static_cast<Incoming*>(data); }
};

// A service request or response: struct { sequence<octet> data; } (XCDR1). Serializes an
// Outgoing (time and id unused), deserializes into an Incoming's data. Foreign or malformed
// payloads (e.g. rmw_cyclonedds's 16-byte header read as a length) fail (Fast DDS drops them).
class ServiceBytesType : public mwfd_compat::CdrType {
public:
    explicit ServiceBytesType(const char* name) : CdrType(name, 4 + 4 + 64) {}  // grows as needed

    void put(const void* data, eprosima::fastcdr::Cdr& ser) override {
        const Outgoing* o = static_cast<const Outgoing*>(data);
        ser.serialize(o->len);
        mwfd_compat::put_bytes(ser, o->data, o->len);
    }

    bool get(eprosima::fastcdr::Cdr& de, uint32_t len, void* data) override {
        Incoming* in = static_cast<Incoming*>(data);
        uint32_t n = 0;
        de.deserialize(n);
        if (n > len) return false;
        in->data.resize(n);
        mwfd_compat::get_bytes(de, in->data.data(), n);
        return true;
    }

    uint32_t size_of(const void* data) override {
        return 4 + 4 + static_cast<const Outgoing*>(data)->len;
    }

protected:
    void* create_sample() override { return new Incoming(); }
    void delete_sample(void* data) override { delete static_cast<Incoming*>(data); }
};

void say(char* err, size_t cap, const std::string& what) {
    if (err && cap) {
        std::snprintf(err, cap, "%s", what.c_str());
    }
}

}  // namespace

extern "C" {

// QoS and options as plain values (the Rust side maps mwperf's flags onto them).
struct mwfd_config {
    uint32_t domain;
    const char* topic_out;     // NULL: no writer
    const char* topic_in;      // NULL: no reader
    int32_t reliable;          // 1 reliable, 0 best effort
    int32_t keep_all;          // 1 keep-all, 0 keep-last depth
    int32_t depth;
    int32_t transient_local;   // 1 transient-local, 0 volatile
    int64_t max_blocking_ns;   // reliable write: longest wait on a full history
    int32_t shm;               // 1: shared-memory transport beside UDP (Fast DDS's default)
    int32_t async_publish;     // 1: asynchronous publish mode
    int32_t data_sharing;      // 1: data-sharing on (needs a bounded type: refused), 0: off
    const char* interface;     // the interface address to use (NULL/"": 127.0.0.1)
    const char* peers;         // comma-separated discovery peers (NULL/"": the interface)
    int64_t max_bytes_per_s;   // > 0: asynchronous publishing through a flow controller of this rate
    int64_t heartbeat_ns;      // > 0: a reliable writer's heartbeat period (0: Fast DDS's, 3 s)
    const char* type_out;      // the writer's type name (NULL: mwperf_msgs::msg::dds_::Bytes_)
    const char* type_in;       // the reader's type name (NULL: as above)
    int32_t raw_cdr;           // 1: type_out/type_in are ROS 2 types the caller writes the CDR of
    const char* properties;    // participant properties, "name=value" lines (DDS-Security's dds.sec.*); NULL: none
};

// A participant and the topics its endpoints use: Fast DDS refuses a second topic of one name
// in a participant, so endpoints share a topic entity, counted, deleted with its last user.
// `lock` guards the map (endpoints of one participant open and close from several threads).
struct mwfd_participant {
    DomainParticipant* participant = nullptr;
    std::mutex lock;
    std::map<std::string, std::pair<Topic*, int>> topics;
};

struct mwfd_endpoint {
    mwfd_participant* owner = nullptr;
    Publisher* publisher = nullptr;
    Subscriber* subscriber = nullptr;
    std::string out_topic;
    std::string in_topic;
    DataWriter* writer = nullptr;
    DataReader* reader = nullptr;
    bool reliable = false;
    Incoming sample;
};

// The participant's topic `name`, created on first use (call with owner->lock held).
static Topic* acquire_topic(mwfd_participant* owner, const std::string& name, const char* type,
                            bool raw_cdr) {
    auto it = owner->topics.find(name);
    if (it != owner->topics.end()) {
        it->second.second += 1;
        return it->second.first;
    }
    if (raw_cdr && type && !owner->participant->find_type(type)) {
        TypeSupport ts(new RawCdrType(type));
        if (ts.register_type(owner->participant) != mwfd_compat::OK) return nullptr;
    }
    Topic* t = owner->participant->create_topic(name, type ? type : TYPE_NAME, TOPIC_QOS_DEFAULT);
    if (t) owner->topics[name] = {t, 1};
    return t;
}

// One user fewer of topic `name`; deleted with its last (call with owner->lock held, after the
// endpoint's reader or writer on it is deleted).
static void release_topic(mwfd_participant* owner, const std::string& name) {
    auto it = owner->topics.find(name);
    if (it == owner->topics.end()) return;
    if (--it->second.second == 0) {
        owner->participant->delete_topic(it->second.first);
        owner->topics.erase(it);
    }
}

// Delete what the endpoint created in its participant (the participant stays).
static void destroy(mwfd_endpoint* ep) {
    if (!ep) return;
    mwfd_participant* owner = ep->owner;
    std::lock_guard<std::mutex> guard(owner->lock);
    if (ep->writer) ep->publisher->delete_datawriter(ep->writer);
    if (ep->publisher) owner->participant->delete_publisher(ep->publisher);
    if (!ep->out_topic.empty()) release_topic(owner, ep->out_topic);
    if (ep->reader) ep->subscriber->delete_datareader(ep->reader);
    if (ep->subscriber) owner->participant->delete_subscriber(ep->subscriber);
    if (!ep->in_topic.empty()) release_topic(owner, ep->in_topic);
    delete ep;
}

static void destroy_participant(mwfd_participant* p) {
    if (!p) return;
    if (p->participant) {
        p->participant->delete_contained_entities();
        DomainParticipantFactory::get_instance()->delete_participant(p->participant);
    }
    delete p;
}

static Duration_t duration_of(int64_t ns) {
    if (ns < 0) ns = 0;
    return Duration_t(static_cast<int32_t>(ns / 1000000000), static_cast<uint32_t>(ns % 1000000000));
}

static std::vector<std::string> split(const char* text) {
    std::vector<std::string> out;
    if (!text) return out;
    std::string s(text), cur;
    for (char c : s) {
        if (c == ',') {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else if (c != ' ') {
            cur.push_back(c);
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

// This host's IPv4 addresses (getifaddrs), for interface=auto.
static std::vector<std::string> local_ipv4() {
    std::vector<std::string> out;
    struct ifaddrs* ifs = nullptr;
    if (getifaddrs(&ifs) != 0) return out;
    for (auto* i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        char text[INET_ADDRSTRLEN];
        auto* sin = reinterpret_cast<struct sockaddr_in*>(i->ifa_addr);
        if (inet_ntop(AF_INET, &sin->sin_addr, text, sizeof text)) out.push_back(text);
    }
    freeifaddrs(ifs);
    return out;
}

static bool locator_v4(const std::string& addr, Locator_t& loc) {
    loc = Locator_t();
    loc.kind = LOCATOR_KIND_UDPv4;
    return IPLocator::setIPv4(loc, addr) && IPLocator::isIPv4(addr);
}

int32_t mwfd_version(char* out, size_t cap) {
    say(out, cap, MWFD_VERSION_TEXT);
    return 0;
}

// A participant with the session-level settings of `cfg` (domain, shm, interface, peers,
// max_bytes_per_s), the type registered; NULL with the reason in `err`.
mwfd_participant* mwfd_participant_open(const mwfd_config* cfg, char* err, size_t cap) {
    auto* owner = new mwfd_participant();
    try {
        std::string iface = (cfg->interface && *cfg->interface) ? cfg->interface : "127.0.0.1";
        std::vector<std::string> peers = split(cfg->peers);
        if (iface == "auto") {
            // The one address of this host among the peers (hosts joined by an emulated link).
            iface.clear();
            for (const auto& mine : local_ipv4())
                for (const auto& p : peers)
                    if (p == mine && iface.empty()) iface = mine;
            if (iface.empty()) {
                say(err, cap, "--opt interface=auto: none of this host's addresses is among --opt peers");
                destroy_participant(owner);
                return nullptr;
            }
        }
        if (peers.empty()) peers.push_back(iface);

        DomainParticipantQos pq;
        pq.name("mwperf");
        // Transports: UDPv4 on the one interface (no multicast anywhere), plus shared memory
        // when asked (Fast DDS's default for peers on the same host).
        pq.transport().use_builtin_transports = false;
        auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
        udp->interfaceWhiteList.push_back(iface);
        udp->sendBufferSize = 4 * 1024 * 1024;
        udp->receiveBufferSize = 4 * 1024 * 1024;
        udp->maxInitialPeersRange = 100;  // participant ids 0..99 on each peer, like Cyclone's index range
        pq.transport().user_transports.push_back(udp);
        if (cfg->shm) {
            auto shm = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
            shm->segment_size(8 * 1024 * 1024);
            pq.transport().user_transports.push_back(shm);
        }
        // Discovery: unicast to the peers' well-known ports, metatraffic unicast on the interface.
        auto& builtin = pq.wire_protocol().builtin;
        builtin.initialPeersList.clear();
        for (const auto& p : peers) {
            Locator_t loc;
            if (!locator_v4(p, loc)) {
                say(err, cap, "'" + p + "' is not an IPv4 address (--opt peers / interface)");
                destroy_participant(owner);
                return nullptr;
            }
            builtin.initialPeersList.push_back(loc);
        }
        Locator_t meta;
        if (!locator_v4(iface, meta)) {
            say(err, cap, "'" + iface + "' is not an IPv4 address (--opt interface)");
            destroy_participant(owner);
            return nullptr;
        }
        builtin.metatrafficUnicastLocatorList.clear();
        builtin.metatrafficUnicastLocatorList.push_back(meta);
        builtin.metatrafficMulticastLocatorList.clear();
        builtin.avoid_builtin_multicast = true;

        // A rate limit: Fast DDS's flow controller (FIFO, 10 ms periods), used by async writers.
        if (cfg->max_bytes_per_s > 0) {
            auto fc = std::make_shared<eprosima::fastdds::rtps::FlowControllerDescriptor>();
            fc->name = FLOW;
            fc->period_ms = 10;
            int64_t per_period = cfg->max_bytes_per_s / 100;
            fc->max_bytes_per_period = static_cast<int32_t>(std::max<int64_t>(1, std::min<int64_t>(per_period, INT32_MAX)));
            pq.flow_controllers().push_back(fc);
        }

        // Participant properties (--opt security: the DDS-Security plugins and their files).
        if (cfg->properties) {
            std::string lines = cfg->properties;
            size_t start = 0;
            while (start < lines.size()) {
                size_t end = lines.find('\n', start);
                if (end == std::string::npos) end = lines.size();
                std::string line = lines.substr(start, end - start);
                size_t eq = line.find('=');
                if (eq != std::string::npos)
                    pq.properties().properties().emplace_back(line.substr(0, eq), line.substr(eq + 1));
                start = end + 1;
            }
        }

        owner->participant = DomainParticipantFactory::get_instance()->create_participant(cfg->domain, pq);
        if (!owner->participant) {
            say(err, cap, "cannot create a participant in domain " + std::to_string(cfg->domain));
            destroy_participant(owner);
            return nullptr;
        }
        auto* bytes = new BytesType();
        auto* request = new ServiceBytesType(REQUEST_TYPE_NAME);
        auto* response = new ServiceBytesType(RESPONSE_TYPE_NAME);
        TypeSupport types[] = {TypeSupport(bytes), TypeSupport(request), TypeSupport(response)};
        const std::string names[] = {bytes->type_name(), request->type_name(), response->type_name()};
        for (size_t i = 0; i < 3; i++) {
            if (types[i].register_type(owner->participant) != mwfd_compat::OK) {
                say(err, cap, "cannot register the type " + names[i]);
                destroy_participant(owner);
                return nullptr;
            }
        }

        return owner;
    } catch (const std::exception& e) {
        say(err, cap, std::string("Fast DDS: ") + e.what());
        destroy_participant(owner);
        return nullptr;
    }
}

void mwfd_participant_close(mwfd_participant* p) {
    try {
        destroy_participant(p);
    } catch (...) {
    }
}

// An endpoint in `owner`: a writer on cfg->topic_out and/or a reader on cfg->topic_in with
// cfg's QoS; NULL with the reason in `err`.
mwfd_endpoint* mwfd_open(mwfd_participant* owner, const mwfd_config* cfg, char* err, size_t cap) {
    auto* ep = new mwfd_endpoint();
    ep->owner = owner;
    ep->reliable = cfg->reliable != 0;
    try {
        auto reliability = cfg->reliable ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
        auto durability = cfg->transient_local ? TRANSIENT_LOCAL_DURABILITY_QOS : VOLATILE_DURABILITY_QOS;
        auto set_history = [&](HistoryQosPolicy& h, ResourceLimitsQosPolicy& r) {
            if (cfg->keep_all) {
                // Fast DDS's own resource limits (as rmw_fastrtps leaves them): a reliable writer
                // whose 5000 samples are unacknowledged blocks (max_blocking), which is the flow
                // control of a keep-all stream; unlimited, it never blocked and its history grew
                h.kind = KEEP_ALL_HISTORY_QOS;
                (void)r;
            } else {
                h.kind = KEEP_LAST_HISTORY_QOS;
                h.depth = cfg->depth;
            }
        };

        std::unique_lock<std::mutex> guard(owner->lock);
        if (cfg->topic_out) {
            Topic* topic = acquire_topic(owner, cfg->topic_out, cfg->type_out, cfg->raw_cdr != 0);
            if (topic) ep->out_topic = cfg->topic_out;
            ep->publisher = owner->participant->create_publisher(PUBLISHER_QOS_DEFAULT);
            DataWriterQos wq = DATAWRITER_QOS_DEFAULT;
            wq.reliability().kind = reliability;
            wq.reliability().max_blocking_time = duration_of(cfg->max_blocking_ns);
            if (cfg->heartbeat_ns > 0) mwfd_compat::set_heartbeat(wq, duration_of(cfg->heartbeat_ns));
            wq.durability().kind = durability;
            set_history(wq.history(), wq.resource_limits());
            wq.publish_mode().kind = cfg->async_publish ? ASYNCHRONOUS_PUBLISH_MODE : SYNCHRONOUS_PUBLISH_MODE;
            if (cfg->max_bytes_per_s > 0) {
                wq.publish_mode().kind = ASYNCHRONOUS_PUBLISH_MODE;
                wq.publish_mode().flow_controller_name = FLOW;
            }
            wq.endpoint().history_memory_policy = mwfd_rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
            if (cfg->data_sharing) {
                wq.data_sharing().on(".");
            } else {
                wq.data_sharing().off();
            }
            if (!topic || !ep->publisher) {
                say(err, cap, std::string("cannot create topic ") + cfg->topic_out);
                guard.unlock();
                destroy(ep);
                return nullptr;
            }
            ep->writer = ep->publisher->create_datawriter(topic, wq);
            if (!ep->writer) {
                say(err, cap, std::string("cannot create a writer on ") + cfg->topic_out +
                                  (cfg->data_sharing ? " (data-sharing needs a bounded type; mwperf's message is an unbounded sequence<octet>)" : ""));
                guard.unlock();
                destroy(ep);
                return nullptr;
            }
        }
        if (cfg->topic_in) {
            Topic* topic = acquire_topic(owner, cfg->topic_in, cfg->type_in, cfg->raw_cdr != 0);
            if (topic) ep->in_topic = cfg->topic_in;
            ep->subscriber = owner->participant->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
            DataReaderQos rq = DATAREADER_QOS_DEFAULT;
            rq.reliability().kind = reliability;
            rq.durability().kind = durability;
            set_history(rq.history(), rq.resource_limits());
            rq.endpoint().history_memory_policy = mwfd_rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
            if (cfg->data_sharing) {
                rq.data_sharing().on(".");
            } else {
                rq.data_sharing().off();
            }
            if (!topic || !ep->subscriber) {
                say(err, cap, std::string("cannot create topic ") + cfg->topic_in);
                guard.unlock();
                destroy(ep);
                return nullptr;
            }
            ep->reader = ep->subscriber->create_datareader(topic, rq);
            if (!ep->reader) {
                say(err, cap, std::string("cannot create a reader on ") + cfg->topic_in +
                                  (cfg->data_sharing ? " (data-sharing needs a bounded type; mwperf's message is an unbounded sequence<octet>)" : ""));
                guard.unlock();
                destroy(ep);
                return nullptr;
            }
        }
        return ep;
    } catch (const std::exception& e) {
        say(err, cap, std::string("Fast DDS: ") + e.what());
        destroy(ep);
        return nullptr;
    }
}

void mwfd_close(mwfd_endpoint* ep) {
    try {
        destroy(ep);
    } catch (...) {
    }
}

// 0 written; -1 not written (reliable: the history stayed full for max_blocking); -2 no writer
// or an exception.
int32_t mwfd_write(mwfd_endpoint* ep, const uint8_t* data, uint32_t len, int64_t time, uint64_t id) {
    if (!ep || !ep->writer) return -2;
    Outgoing o{data, len, time, id};
    try {
        return mwfd_compat::write(ep->writer, &o) ? 0 : -1;
    } catch (...) {
        return -2;
    }
}

// Wait at most timeout_ns until every matched reader acknowledged what the writer sent (a
// reliable writer's history is dropped with it): 1 all acknowledged (or nothing to wait for: no
// writer, a best-effort one), 0 not in time.
int32_t mwfd_wait_acked(mwfd_endpoint* ep, int64_t timeout_ns) {
    if (!ep || !ep->writer || !ep->reliable) return 1;
    try {
        return ep->writer->wait_for_acknowledgments(duration_of(timeout_ns)) == mwfd_compat::OK;
    } catch (...) {
        return 0;
    }
}

// Take one sample with data: 1 (`*data`/`*len` point into the endpoint's sample, valid until the
// next take), 0 none, -1 an error. Samples without data (disposals) are skipped.
int32_t mwfd_take(mwfd_endpoint* ep, const uint8_t** data, uint32_t* len) {
    if (!ep || !ep->reader) return 0;
    try {
        for (;;) {
            SampleInfo info;
            ReturnCode_t rc = ep->reader->take_next_sample(&ep->sample, &info);
            if (rc == mwfd_compat::NO_DATA) return 0;
            if (rc != mwfd_compat::OK) return -1;
            if (info.valid_data) {
                *data = ep->sample.data.data();
                *len = static_cast<uint32_t>(ep->sample.data.size());
                return 1;
            }
        }
    } catch (...) {
        return -1;
    }
}

// Sleep until an unread sample is there (1) or `timeout_ns` passed (0); -1 without a reader.
int32_t mwfd_wait(mwfd_endpoint* ep, int64_t timeout_ns) {
    if (!ep || !ep->reader) return -1;
    try {
        return ep->reader->wait_for_unread_message(duration_of(timeout_ns)) ? 1 : 0;
    } catch (...) {
        return -1;
    }
}

// A GUID as 16 bytes (prefix, entity id) and back.
static void guid_out(const GUID_t& g, uint8_t* out) {
    std::memcpy(out, g.guidPrefix.value, 12);
    std::memcpy(out + 12, g.entityId.value, 4);
}

static GUID_t guid_in(const uint8_t* in) {
    GUID_t g;
    std::memcpy(g.guidPrefix.value, in, 12);
    std::memcpy(g.entityId.value, in + 12, 4);
    return g;
}

static int64_t sn_out(const SequenceNumber_t& sn) {
    return static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(sn.high)) << 32) | sn.low);
}

static SequenceNumber_t sn_in(int64_t v) {
    return SequenceNumber_t(static_cast<int32_t>(v >> 32), static_cast<uint32_t>(v & 0xffffffff));
}

// The GUIDs of the endpoint's writer and reader (16 bytes each; zeros where it has none).
int32_t mwfd_guids(mwfd_endpoint* ep, uint8_t* writer, uint8_t* reader) {
    std::memset(writer, 0, 16);
    std::memset(reader, 0, 16);
    if (!ep) return -1;
    try {
        if (ep->writer) guid_out(ep->writer->guid(), writer);
        if (ep->reader) guid_out(ep->reader->guid(), reader);
        return 0;
    } catch (...) {
        return -1;
    }
}

// Write with a related sample identity (related_guid: 16 bytes; related_sn as high << 32 | low,
// e.g. SequenceNumber_t::unknown() = -1 << 32); the written sample's identity goes to
// out_guid/out_sn. 0 written; -1 not written (reliable: the history stayed full for
// max_blocking); -2 no writer or an exception.
int32_t mwfd_write_related(mwfd_endpoint* ep, const uint8_t* data, uint32_t len,
                           const uint8_t* related_guid, int64_t related_sn,
                           uint8_t* out_guid, int64_t* out_sn) {
    if (!ep || !ep->writer) return -2;
    Outgoing o{data, len, 0, 0};
    try {
        WriteParams params;
        params.related_sample_identity(SampleIdentity());
        params.related_sample_identity().writer_guid(guid_in(related_guid));
        params.related_sample_identity().sequence_number(sn_in(related_sn));
        if (!mwfd_compat::write(ep->writer, &o, params)) return -1;
        guid_out(params.sample_identity().writer_guid(), out_guid);
        *out_sn = sn_out(params.sample_identity().sequence_number());
        return 0;
    } catch (...) {
        return -2;
    }
}

// mwfd_take, plus the sample's identity (writer GUID, SN) and its related identity (GUID,
// SN; an unknown one is all zeros / SequenceNumber_t::unknown()).
int32_t mwfd_take_info(mwfd_endpoint* ep, const uint8_t** data, uint32_t* len,
                       uint8_t* guid, int64_t* sn, uint8_t* related_guid, int64_t* related_sn) {
    if (!ep || !ep->reader) return 0;
    try {
        for (;;) {
            SampleInfo info;
            ReturnCode_t rc = ep->reader->take_next_sample(&ep->sample, &info);
            if (rc == mwfd_compat::NO_DATA) return 0;
            if (rc != mwfd_compat::OK) return -1;
            if (info.valid_data) {
                *data = ep->sample.data.data();
                *len = static_cast<uint32_t>(ep->sample.data.size());
                guid_out(info.sample_identity.writer_guid(), guid);
                *sn = sn_out(info.sample_identity.sequence_number());
                guid_out(info.related_sample_identity.writer_guid(), related_guid);
                *related_sn = sn_out(info.related_sample_identity.sequence_number());
                return 1;
            }
        }
    } catch (...) {
        return -1;
    }
}

// Matched peers: readers of our writer, writers of our reader (-1 where we have none).
int32_t mwfd_matched(mwfd_endpoint* ep, int32_t* readers, int32_t* writers) {
    *readers = -1;
    *writers = -1;
    if (!ep) return -1;
    if (ep->writer) {
        PublicationMatchedStatus st;
        if (ep->writer->get_publication_matched_status(st) != mwfd_compat::OK) return -1;
        *readers = st.current_count;
    }
    if (ep->reader) {
        SubscriptionMatchedStatus st;
        if (ep->reader->get_subscription_matched_status(st) != mwfd_compat::OK) return -1;
        *writers = st.current_count;
    }
    return 0;
}

}  // extern "C"
