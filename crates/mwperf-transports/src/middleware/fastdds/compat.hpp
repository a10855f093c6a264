// What differs between the Fast DDS versions shim.cpp is compiled against, in one place:
//   - Fast DDS 2.x with Fast CDR 1.x: Debian's libfastrtps 2.9 (build.rs, the default);
//   - Fast DDS 2.x with Fast CDR 2.x: ROS 2 Jazzy's wheels (2.14), compiled on first use;
//   - Fast DDS 3.x with Fast CDR 2.x: ROS 2 Kilted's wheels (3.2), compiled on first use
//     (wheel.rs: `--opt distro=jazzy|kilted`, the Fast DDS of that distribution's RMW).
// Fast DDS 3 moved the RTPS types from eprosima::fastrtps to eprosima::fastdds, renamed the
// headers .h -> .hpp and TopicDataType's virtual functions, made ReturnCode_t a plain integer and
// DataWriter::write return one; Fast CDR 2 renamed its array and length functions. shim.cpp is
// written once against the names defined here.

#pragma once

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastcdr/exceptions/Exception.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/Topic.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/rtps/flowcontrol/FlowControllerDescriptor.hpp>

#include <cstdint>
#include <functional>
#include <string>

#if __has_include(<fastdds/config.hpp>)
#include <fastdds/config.hpp>
#endif

#if defined(FASTDDS_VERSION_MAJOR) && FASTDDS_VERSION_MAJOR >= 3
#define MWFD_FASTDDS3 1
#include <fastdds/rtps/common/WriteParams.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.hpp>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.hpp>
#include <fastdds/utils/IPLocator.hpp>
namespace mwfd_rtps = eprosima::fastdds::rtps;
#else
#define MWFD_FASTDDS3 0
#include <fastdds/rtps/common/WriteParams.h>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/config.h>
#include <fastrtps/utils/IPLocator.h>
namespace mwfd_rtps = eprosima::fastrtps::rtps;
#endif

namespace mwfd_compat {

using eprosima::fastdds::dds::DataWriter;
using eprosima::fastdds::dds::DataWriterQos;
using eprosima::fastdds::dds::TopicDataType;
#if MWFD_FASTDDS3
using eprosima::fastdds::dds::ReturnCode_t;
#else
using eprosima::fastrtps::types::ReturnCode_t;
#endif

#if MWFD_FASTDDS3
const ReturnCode_t OK = eprosima::fastdds::dds::RETCODE_OK;
const ReturnCode_t NO_DATA = eprosima::fastdds::dds::RETCODE_NO_DATA;
#define MWFD_VERSION_TEXT "Fast DDS " FASTDDS_VERSION_STR " (libfastdds)"
#else
const ReturnCode_t OK = ReturnCode_t::RETCODE_OK;
const ReturnCode_t NO_DATA = ReturnCode_t::RETCODE_NO_DATA;
#define MWFD_VERSION_TEXT "Fast DDS " FASTRTPS_VERSION_STR " (libfastrtps)"
#endif

// A CDR stream over `len` bytes at `data` (XCDR1, as ROS 2 puts uint8[] messages on the wire).
inline eprosima::fastcdr::Cdr cdr_over(eprosima::fastcdr::FastBuffer& buf) {
#if FASTCDR_VERSION_MAJOR >= 2
    return eprosima::fastcdr::Cdr(buf, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN, eprosima::fastcdr::CdrVersion::XCDRv1);
#else
    return eprosima::fastcdr::Cdr(buf, eprosima::fastcdr::Cdr::DEFAULT_ENDIAN, eprosima::fastcdr::Cdr::DDS_CDR);
#endif
}

inline void put_bytes(eprosima::fastcdr::Cdr& ser, const uint8_t* data, uint32_t len) {
#if FASTCDR_VERSION_MAJOR >= 2
    ser.serialize_array(data, len);
#else
    ser.serializeArray(data, len);
#endif
}

inline void get_bytes(eprosima::fastcdr::Cdr& de, uint8_t* data, uint32_t len) {
#if FASTCDR_VERSION_MAJOR >= 2
    de.deserialize_array(data, len);
#else
    de.deserializeArray(data, len);
#endif
}

inline uint32_t written(eprosima::fastcdr::Cdr& ser) {
#if FASTCDR_VERSION_MAJOR >= 2
    return static_cast<uint32_t>(ser.get_serialized_data_length());
#else
    return static_cast<uint32_t>(ser.getSerializedDataLength());
#endif
}

// A keyless type whose samples shim.cpp writes and reads as CDR: the version-specific virtual
// functions of TopicDataType, in terms of the four below.
class CdrType : public TopicDataType {
public:
    CdrType(const char* name, uint32_t prealloc) {
#if MWFD_FASTDDS3
        set_name(name);
        max_serialized_type_size = prealloc;
        is_compute_key_provided = false;
#else
        setName(name);
        m_typeSize = prealloc;
        m_isGetKeyDefined = false;
#endif
    }

    // The sample's CDR after the encapsulation (which the caller writes and reads).
    virtual void put(const void* data, eprosima::fastcdr::Cdr& ser) = 0;
    // false: the payload (of `len` bytes) is not one of these.
    virtual bool get(eprosima::fastcdr::Cdr& de, uint32_t len, void* data) = 0;
    virtual uint32_t size_of(const void* data) = 0;

    std::string type_name() const {
#if MWFD_FASTDDS3
        return get_name();
#else
        return getName();
#endif
    }

#if MWFD_FASTDDS3
    bool serialize(const void* const data, mwfd_rtps::SerializedPayload_t& payload,
                   eprosima::fastdds::dds::DataRepresentationId_t) override {
        return write_payload(data, payload);
    }
    bool deserialize(mwfd_rtps::SerializedPayload_t& payload, void* data) override {
        return read_payload(payload, data);
    }
    uint32_t calculate_serialized_size(const void* const data, eprosima::fastdds::dds::DataRepresentationId_t) override {
        return size_of(data);
    }
    bool compute_key(mwfd_rtps::SerializedPayload_t&, mwfd_rtps::InstanceHandle_t&, bool) override { return false; }
    bool compute_key(const void* const, mwfd_rtps::InstanceHandle_t&, bool) override { return false; }
#else
    bool serialize(void* data, mwfd_rtps::SerializedPayload_t* payload) override {
        return write_payload(data, *payload);
    }
    bool deserialize(mwfd_rtps::SerializedPayload_t* payload, void* data) override {
        return read_payload(*payload, data);
    }
    std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
        uint32_t size = size_of(data);
        return [size]() { return size; };
    }
    void* createData() override { return create_sample(); }
    void deleteData(void* data) override { delete_sample(data); }
    bool getKey(void*, mwfd_rtps::InstanceHandle_t*, bool) override { return false; }
#endif

protected:
    virtual void* create_sample() = 0;
    virtual void delete_sample(void* data) = 0;

#if MWFD_FASTDDS3
public:
    void* create_data() override { return create_sample(); }
    void delete_data(void* data) override { delete_sample(data); }
#endif

    // The payload as written and read: CDR through put/get by default; a type whose samples are
    // CDR already (RawCdrType) copies them instead.
    virtual bool write_payload(const void* data, mwfd_rtps::SerializedPayload_t& payload) {
        try {
            eprosima::fastcdr::FastBuffer buf(reinterpret_cast<char*>(payload.data), payload.max_size);
            eprosima::fastcdr::Cdr ser = cdr_over(buf);
            payload.encapsulation = ser.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
            ser.serialize_encapsulation();
            put(data, ser);
            payload.length = written(ser);
            return true;
        } catch (const eprosima::fastcdr::exception::Exception&) {
            return false;
        }
    }

    // Foreign or malformed payloads fail here (false: Fast DDS drops the sample), never crash.
    virtual bool read_payload(mwfd_rtps::SerializedPayload_t& payload, void* data) {
        try {
            eprosima::fastcdr::FastBuffer buf(reinterpret_cast<char*>(payload.data), payload.length);
            eprosima::fastcdr::Cdr de = cdr_over(buf);
            de.read_encapsulation();
            payload.encapsulation = de.endianness() == eprosima::fastcdr::Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
            return get(de, payload.length, data);
        } catch (const eprosima::fastcdr::exception::Exception&) {
            return false;
        }
    }
};

// A reliable writer's heartbeat period (renamed in 3.x).
template <class Duration>
void set_heartbeat(DataWriterQos& q, const Duration& period) {
#if MWFD_FASTDDS3
    q.reliable_writer_qos().times.heartbeat_period = period;
#else
    q.reliable_writer_qos().times.heartbeatPeriod = period;
#endif
}

// DataWriter::write: a bool in 2.x, a ReturnCode_t in 3.x.
inline bool write(DataWriter* w, void* data) {
#if MWFD_FASTDDS3
    return w->write(data) == OK;
#else
    return w->write(data);
#endif
}

inline bool write(DataWriter* w, void* data, mwfd_rtps::WriteParams& params) {
#if MWFD_FASTDDS3
    return w->write(data, params) == OK;
#else
    return w->write(data, params);
#endif
}

}  // namespace mwfd_compat
