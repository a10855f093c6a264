/* A topic descriptor for any type name, for reading samples as they travel (serialized CDR).
 *
 * Cyclone DDS 0.10 matches a reader with a writer by topic and type name (a descriptor without
 * XTypes information skips the assignability check). A reader of this descriptor therefore matches
 * every writer of `type_name`; its one op reads a single byte (Cyclone refuses a type without
 * members, and every ROS 2 message's CDR has at least one byte), and the serialized sample is kept
 * whole, so dds_takecdr + ddsi_serdata_size/to_ser give the bytes as they arrived: the mechanism
 * zenoh's DDS bridges use (cyclors' serialized types), without a custom sertype. Data only: nothing
 * here calls libddsc, which the transport opens at run time. */

#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include "dds/dds.h"

static const uint32_t raw_ops[] = { DDS_OP_ADR | DDS_OP_TYPE_1BY, 0u, DDS_OP_RTS };

/* Keyed topics (RTPS entity kinds "with key"): Cyclone matches a keyed writer only with a keyed
 * reader, so the one byte is declared the key. Instances then follow that byte (at most 256),
 * which bounds the reader's history; the probe never looks at instances. */
static const uint32_t raw_keyed_ops[] = {
  DDS_OP_ADR | DDS_OP_FLAG_KEY | DDS_OP_FLAG_MU | DDS_OP_TYPE_1BY, 0u, DDS_OP_RTS,
  DDS_OP_KOF | 1, 0u
};
static const dds_key_descriptor_t raw_keys[1] = { { "k", 3, 0 } };

dds_topic_descriptor_t *mwperf_raw_descriptor (const char *type_name, bool keyed)
{
  char *name = strdup (type_name);
  dds_topic_descriptor_t *d = malloc (sizeof (*d));
  if (name == NULL || d == NULL)
  {
    free (name);
    free (d);
    return NULL;
  }
  const dds_topic_descriptor_t plain = {
    .m_size = 1, .m_align = 1, .m_flagset = DDS_TOPIC_NO_OPTIMIZE, .m_nkeys = 0u,
    .m_typename = name, .m_keys = NULL, .m_nops = 2, .m_ops = raw_ops, .m_meta = ""
  };
  const dds_topic_descriptor_t with_key = {
    .m_size = 1, .m_align = 1,
    .m_flagset = DDS_TOPIC_NO_OPTIMIZE | DDS_TOPIC_FIXED_KEY | DDS_TOPIC_FIXED_KEY_XCDR2,
    .m_nkeys = 1u, .m_typename = name, .m_keys = raw_keys, .m_nops = 2, .m_ops = raw_keyed_ops,
    .m_meta = ""
  };
  memcpy (d, keyed ? &with_key : &plain, sizeof (*d));
  return d;
}

void mwperf_raw_descriptor_free (dds_topic_descriptor_t *d)
{
  if (d != NULL)
  {
    free ((void *) d->m_typename);
    free (d);
  }
}
