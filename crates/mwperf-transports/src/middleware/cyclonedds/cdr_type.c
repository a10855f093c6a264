/* A Cyclone DDS type whose samples are CDR the caller wrote: the sertype of `--opt ros2-type`
 * (mwperf's ROS 2 layouts, crates/mwperf-transports/src/middleware/ros2/message.rs, write and
 * read the CDR; this file only moves it). A serdata is the serialized sample as it travels
 * (encapsulation header first): dds_writecdr sends one made by mwperf_cdr_serdata, dds_takecdr
 * hands over the ones received, read back with ddsi_serdata_size/to_ser. This is how
 * rmw_cyclonedds carries ROS 2 messages (its own sertype and serdata), without the C sample
 * conversion, which mwperf does not need.
 *
 * The type is keyless (ROS 2 messages are), carries no XTypes type information (a peer then
 * matches it by type name: Fast DDS and Cyclone both do), and has no sample representation
 * (dds_write/dds_take of it fail: to/from_sample are refused).
 *
 * Nothing here links libddsc: the four functions needed from it are handed over at run time
 * (mwperf_cdr_setup), as the transport opens libddsc with dlopen. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dds/dds.h"
#include "dds/ddsi/ddsi_sertype.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "dds/ddsi/q_radmin.h"

struct mwperf_cdr_api {
  void (*sertype_init) (struct ddsi_sertype *tp, const char *type_name, const struct ddsi_sertype_ops *sertype_ops, const struct ddsi_serdata_ops *serdata_ops, bool topickind_no_key);
  void (*sertype_fini) (struct ddsi_sertype *tp);
  void (*serdata_init) (struct ddsi_serdata *d, const struct ddsi_sertype *tp, enum ddsi_serdata_kind kind);
  ddsi_sertype_v0_t sertype_v0;
};

static struct mwperf_cdr_api api;

struct cdr_serdata {
  struct ddsi_serdata c;
  uint32_t size;        /* serialized bytes, encapsulation header included */
  unsigned char *data;
};

static struct cdr_serdata *serdata_new (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, size_t size)
{
  if (size > UINT32_MAX)
    return NULL;
  struct cdr_serdata *d = malloc (sizeof (*d));
  if (d == NULL)
    return NULL;
  d->data = size > 0 ? malloc (size) : NULL;
  if (size > 0 && d->data == NULL)
  {
    free (d);
    return NULL;
  }
  api.serdata_init (&d->c, type, kind);
  d->size = (uint32_t) size;
  return d;
}

static bool sd_eqkey (const struct ddsi_serdata *a, const struct ddsi_serdata *b)
{
  (void) a; (void) b;
  return true; /* keyless: one instance */
}

static uint32_t sd_get_size (const struct ddsi_serdata *dcmn)
{
  return ((const struct cdr_serdata *) dcmn)->size;
}

static struct ddsi_serdata *sd_from_ser (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const struct nn_rdata *fragchain, size_t size)
{
  struct cdr_serdata *d = serdata_new (type, kind, size);
  if (d == NULL)
    return NULL;
  /* fragments may overlap: copy only what each adds (the first holds the header) */
  uint32_t off = 0;
  for (; fragchain != NULL; fragchain = fragchain->nextfrag)
  {
    if (fragchain->maxp1 > off && fragchain->min <= off)
    {
      uint32_t end = fragchain->maxp1 < size ? fragchain->maxp1 : (uint32_t) size;
      const unsigned char *payload = NN_RMSG_PAYLOADOFF (fragchain->rmsg, NN_RDATA_PAYLOAD_OFF (fragchain));
      memcpy (d->data + off, payload + off - fragchain->min, end - off);
      off = end;
    }
  }
  return &d->c;
}

static struct ddsi_serdata *sd_from_ser_iov (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov, const ddsrt_iovec_t *iov, size_t size)
{
  struct cdr_serdata *d = serdata_new (type, kind, size);
  if (d == NULL)
    return NULL;
  size_t off = 0;
  for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++)
  {
    size_t n = iov[i].iov_len < size - off ? iov[i].iov_len : size - off;
    memcpy (d->data + off, iov[i].iov_base, n);
    off += n;
  }
  return &d->c;
}

static struct ddsi_serdata *sd_from_keyhash (const struct ddsi_sertype *type, const struct ddsi_keyhash *keyhash)
{
  (void) keyhash;
  struct cdr_serdata *d = serdata_new (type, SDK_KEY, 0);
  return d ? &d->c : NULL;
}

static struct ddsi_serdata *sd_from_sample (const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const void *sample)
{
  (void) type; (void) kind; (void) sample;
  return NULL; /* no sample representation: write with dds_writecdr */
}

static void sd_to_ser (const struct ddsi_serdata *dcmn, size_t off, size_t sz, void *buf)
{
  const struct cdr_serdata *d = (const struct cdr_serdata *) dcmn;
  if (off < d->size)
    memcpy (buf, d->data + off, sz <= d->size - off ? sz : d->size - off);
}

static struct ddsi_serdata *sd_to_ser_ref (const struct ddsi_serdata *dcmn, size_t off, size_t sz, ddsrt_iovec_t *ref)
{
  const struct cdr_serdata *d = (const struct cdr_serdata *) dcmn;
  ref->iov_base = d->data + off;
  ref->iov_len = (ddsrt_iov_len_t) sz;
  struct ddsi_serdata *m = (struct ddsi_serdata *) dcmn;
  __atomic_fetch_add (&m->refc.v, 1u, __ATOMIC_RELAXED);
  return m;
}

static void sd_to_ser_unref (struct ddsi_serdata *d, const ddsrt_iovec_t *ref)
{
  (void) ref;
  if (__atomic_sub_fetch (&d->refc.v, 1u, __ATOMIC_ACQ_REL) == 0)
    d->ops->free (d);
}

static bool sd_to_sample (const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim)
{
  (void) d; (void) sample; (void) bufptr; (void) buflim;
  return false; /* take with dds_takecdr */
}

static struct ddsi_serdata *sd_to_untyped (const struct ddsi_serdata *dcmn)
{
  /* the key of a keyless sample: nothing (as rmw_cyclonedds) */
  struct cdr_serdata *d = serdata_new (dcmn->type, SDK_KEY, 0);
  if (d == NULL)
    return NULL;
  d->c.type = NULL;
  return &d->c;
}

static bool sd_untyped_to_sample (const struct ddsi_sertype *type, const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim)
{
  (void) type; (void) d; (void) sample; (void) bufptr; (void) buflim;
  return true;
}

static void sd_free (struct ddsi_serdata *dcmn)
{
  struct cdr_serdata *d = (struct cdr_serdata *) dcmn;
  free (d->data);
  free (d);
}

static size_t sd_print (const struct ddsi_sertype *type, const struct ddsi_serdata *dcmn, char *buf, size_t size)
{
  (void) type;
  return (size_t) snprintf (buf, size, "(%u bytes of CDR)", ((const struct cdr_serdata *) dcmn)->size);
}

static void sd_get_keyhash (const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5)
{
  (void) d; (void) force_md5;
  memset (buf->value, 0, sizeof (buf->value));
}

static const struct ddsi_serdata_ops serdata_ops = {
  .eqkey = sd_eqkey,
  .get_size = sd_get_size,
  .from_ser = sd_from_ser,
  .from_ser_iov = sd_from_ser_iov,
  .from_keyhash = sd_from_keyhash,
  .from_sample = sd_from_sample,
  .to_ser = sd_to_ser,
  .to_ser_ref = sd_to_ser_ref,
  .to_ser_unref = sd_to_ser_unref,
  .to_sample = sd_to_sample,
  .to_untyped = sd_to_untyped,
  .untyped_to_sample = sd_untyped_to_sample,
  .free = sd_free,
  .print = sd_print,
  .get_keyhash = sd_get_keyhash,
};

static void st_free (struct ddsi_sertype *tp)
{
  api.sertype_fini (tp);
  free (tp);
}

static void st_zero_samples (const struct ddsi_sertype *tp, void *samples, size_t count)
{
  (void) tp; (void) samples; (void) count;
}

static void st_realloc_samples (void **ptrs, const struct ddsi_sertype *tp, void *old, size_t oldcount, size_t count)
{
  (void) tp; (void) oldcount;
  /* a one-byte placeholder per sample: nothing is ever converted into it */
  char *buf = realloc (old, count > 0 ? count : 1);
  for (size_t i = 0; i < count; i++)
    ptrs[i] = buf ? buf + i : NULL;
}

static void st_free_samples (const struct ddsi_sertype *tp, void **ptrs, size_t count, dds_free_op_t op)
{
  (void) tp; (void) count;
  if ((op & DDS_FREE_ALL_BIT) && count > 0)
    free (ptrs[0]);
}

static bool st_equal (const struct ddsi_sertype *a, const struct ddsi_sertype *b)
{
  (void) a; (void) b;
  return true; /* the name and the ops are compared before this */
}

static uint32_t st_hash (const struct ddsi_sertype *tp)
{
  (void) tp;
  return 0x6d777066u;
}

static struct ddsi_sertype_ops sertype_ops = {
  .arg = NULL,
  .free = st_free,
  .zero_samples = st_zero_samples,
  .realloc_samples = st_realloc_samples,
  .free_samples = st_free_samples,
  .equal = st_equal,
  .hash = st_hash,
  /* no type information (type_id, type_map, type_info), no derived sertypes, no type lookup */
};

/* Hand over the libddsc functions (once, before any other call). */
void mwperf_cdr_setup (const struct mwperf_cdr_api *from)
{
  api = *from;
  sertype_ops.version = api.sertype_v0;
}

/* A new keyless sertype named `type_name` (dds_create_topic_sertype takes it over). */
struct ddsi_sertype *mwperf_cdr_sertype (const char *type_name)
{
  struct ddsi_sertype *tp = calloc (1, sizeof (*tp));
  if (tp == NULL)
    return NULL;
  api.sertype_init (tp, type_name, &sertype_ops, &serdata_ops, true);
  return tp;
}

/* A serdata of `type` holding `len` bytes of CDR (header included), for dds_writecdr (which
 * takes its reference). */
struct ddsi_serdata *mwperf_cdr_serdata (const struct ddsi_sertype *type, const void *data, size_t len)
{
  struct cdr_serdata *d = serdata_new (type, SDK_DATA, len);
  if (d == NULL)
    return NULL;
  memcpy (d->data, data, len);
  return &d->c;
}
