// What the Fast DDS reference programs share (pingpong.cpp, throughput.cpp): mwperf's message
// type written from scratch on the plain Fast DDS 2.x API (the layout of mwperf's fastdds
// transport: sequence<octet> data, int64 time, uint64 id, under the ROS 2 type name of
// mwperf_msgs/msg/Bytes) and a participant on UDPv4 127.0.0.1 with unicast discovery, shared
// memory on or off, as mwperf's transport makes it.
#pragma once

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

struct Msg {
    std::vector<uint8_t> data;
    int64_t time = 0;
    uint64_t id = 0;
};

class MsgType : public eprosima::fastdds::dds::TopicDataType {
public:
    MsgType() {
        setName("mwperf_msgs::msg::dds_::Bytes_");
        m_typeSize = 128;
        m_isGetKeyDefined = false;
    }
    bool serialize(void* d, eprosima::fastrtps::rtps::SerializedPayload_t* p) override {
        auto* m = static_cast<Msg*>(d);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(p->data), p->max_size);
        eprosima::fastcdr::Cdr c(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN, eprosima::fastcdr::Cdr::DDS_CDR);
        p->encapsulation = c.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
        c.serialize_encapsulation();
        c << m->data << m->time << m->id;
        p->length = static_cast<uint32_t>(c.getSerializedDataLength());
        return true;
    }
    bool deserialize(eprosima::fastrtps::rtps::SerializedPayload_t* p, void* d) override {
        auto* m = static_cast<Msg*>(d);
        eprosima::fastcdr::FastBuffer fb(reinterpret_cast<char*>(p->data), p->length);
        eprosima::fastcdr::Cdr c(fb, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN, eprosima::fastcdr::Cdr::DDS_CDR);
        c.read_encapsulation();
        c >> m->data >> m->time >> m->id;
        return true;
    }
    std::function<uint32_t()> getSerializedSizeProvider(void* d) override {
        auto* m = static_cast<Msg*>(d);
        uint32_t body = (4 + static_cast<uint32_t>(m->data.size()) + 7) & ~7u;
        uint32_t n = 4 + body + 16;
        return [n]() { return n; };
    }
    void* createData() override { return new Msg(); }
    void deleteData(void* d) override { delete static_cast<Msg*>(d); }
    bool getKey(void*, eprosima::fastrtps::rtps::InstanceHandle_t*, bool) override { return false; }
};

inline eprosima::fastdds::dds::DomainParticipant* make_participant(int domain, bool shm) {
    using namespace eprosima::fastdds::dds;
    DomainParticipantQos pq;
    pq.transport().use_builtin_transports = false;
    auto udp = std::make_shared<eprosima::fastdds::rtps::UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    udp->maxInitialPeersRange = 100;
    udp->sendBufferSize = udp->receiveBufferSize = 4 << 20;
    pq.transport().user_transports.push_back(udp);
    if (shm) {
        auto s = std::make_shared<eprosima::fastdds::rtps::SharedMemTransportDescriptor>();
        s->segment_size(8 << 20);
        pq.transport().user_transports.push_back(s);
    }
    eprosima::fastrtps::rtps::Locator_t peer;
    eprosima::fastrtps::rtps::IPLocator::setIPv4(peer, "127.0.0.1");
    pq.wire_protocol().builtin.initialPeersList.push_back(peer);
    pq.wire_protocol().builtin.metatrafficUnicastLocatorList.push_back(peer);
    auto* part = DomainParticipantFactory::get_instance()->create_participant(domain, pq);
    if (part) TypeSupport(new MsgType()).register_type(part);
    return part;
}
