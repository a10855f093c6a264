/* mwperf's ros2 transport: a real ROS 2 node through rcl's C API (the calls micro-ROS's rclc
 * makes), behind a small C ABI the Rust side loads at run time (ffi.rs).
 *
 * Compiled per ROS 2 distribution against that distribution's own headers (compile.rs): the rcl
 * structs (init options, node / publisher / subscription options with rmw_qos_profile_t, the
 * wait set) differ between releases, so no layout is written by hand anywhere.
 *
 * Messages travel serialized (rcl_publish_serialized_message / rcl_take_serialized_message):
 * the Rust side writes and parses the CDR of the message type itself, so the bytes are copied
 * once each way and the type support is used only for the topic's type. */

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcl/error_handling.h>
#include <rcl/graph.h>
#include <rcl/rcl.h>
#include <rcl/wait.h>
#include <rcutils/allocator.h>
#include <rmw/serialized_message.h>
#include <rosidl_runtime_c/message_type_support_struct.h>

#define EXPORT __attribute__((visibility("default")))

/* Clean-up whose failure changes nothing (the handle is gone either way). */
static void ignore(rcl_ret_t rc) { (void)rc; }

/* One ROS 2 context and the node in it (one DDS participant with rmw_fastrtps_cpp). */
typedef struct mwr_node {
  rcl_init_options_t init_options;
  rcl_context_t context;
  rcl_node_t node;
} mwr_node;

/* A publisher and/or a subscription of one node, with the wait set the subscription waits in. */
typedef struct mwr_endpoint {
  mwr_node *owner;
  int has_pub, has_sub, has_wait_set;
  rcl_publisher_t pub;
  rcl_subscription_t sub;
  rcl_wait_set_t wait_set;
  rcl_serialized_message_t taken;
} mwr_endpoint;

/* What an endpoint is opened with (struct Config in ffi.rs: same order and types). */
typedef struct mwr_config {
  const char *topic_out; /* ROS 2 topic names (/mwperf/<base>/ping) or NULL */
  const char *topic_in;
  const char *type_library; /* lib<pkg>__rosidl_typesupport_c.so, a full path */
  const char *type_symbol;  /* rosidl_typesupport_c__get_message_type_support_handle__... */
  int reliable;
  int keep_all;
  int depth;
  int transient_local;
} mwr_config;

static void fail(char *err, size_t len, const char *what, ...) {
  char head[256];
  va_list args;
  va_start(args, what);
  vsnprintf(head, sizeof head, what, args);
  va_end(args);
  if (rcl_error_is_set()) {
    snprintf(err, len, "%s: %s", head, rcl_get_error_string().str);
    rcl_reset_error();
  } else {
    snprintf(err, len, "%s", head);
  }
}

EXPORT mwr_node *mwr_node_open(unsigned domain, const char *name, char *err, size_t err_len) {
  mwr_node *n = calloc(1, sizeof *n);
  if (!n) {
    fail(err, err_len, "out of memory");
    return NULL;
  }
  rcl_allocator_t alloc = rcl_get_default_allocator();
  n->init_options = rcl_get_zero_initialized_init_options();
  if (rcl_init_options_init(&n->init_options, alloc) != RCL_RET_OK) {
    fail(err, err_len, "rcl_init_options_init");
    free(n);
    return NULL;
  }
  if (rcl_init_options_set_domain_id(&n->init_options, domain) != RCL_RET_OK) {
    fail(err, err_len, "rcl_init_options_set_domain_id(%u)", domain);
    ignore(rcl_init_options_fini(&n->init_options));
    free(n);
    return NULL;
  }
  n->context = rcl_get_zero_initialized_context();
  if (rcl_init(0, NULL, &n->init_options, &n->context) != RCL_RET_OK) {
    fail(err, err_len, "rcl_init (domain %u)", domain);
    ignore(rcl_init_options_fini(&n->init_options));
    free(n);
    return NULL;
  }
  n->node = rcl_get_zero_initialized_node();
  rcl_node_options_t options = rcl_node_get_default_options();
  options.enable_rosout = false; /* no /rosout publisher: nothing is logged through ROS */
  if (rcl_node_init(&n->node, name, "/", &n->context, &options) != RCL_RET_OK) {
    fail(err, err_len, "rcl_node_init(%s)", name);
    ignore(rcl_shutdown(&n->context));
    ignore(rcl_context_fini(&n->context));
    ignore(rcl_init_options_fini(&n->init_options));
    free(n);
    return NULL;
  }
  return n;
}

EXPORT void mwr_node_close(mwr_node *n) {
  if (!n) return;
  ignore(rcl_node_fini(&n->node));
  ignore(rcl_shutdown(&n->context));
  ignore(rcl_context_fini(&n->context));
  ignore(rcl_init_options_fini(&n->init_options));
  free(n);
}

static void set_qos(rmw_qos_profile_t *q, const mwr_config *c) {
  q->history = c->keep_all ? RMW_QOS_POLICY_HISTORY_KEEP_ALL : RMW_QOS_POLICY_HISTORY_KEEP_LAST;
  q->depth = c->keep_all ? 0 : (size_t)c->depth;
  q->reliability =
      c->reliable ? RMW_QOS_POLICY_RELIABILITY_RELIABLE : RMW_QOS_POLICY_RELIABILITY_BEST_EFFORT;
  q->durability = c->transient_local ? RMW_QOS_POLICY_DURABILITY_TRANSIENT_LOCAL
                                     : RMW_QOS_POLICY_DURABILITY_VOLATILE;
}

static const rosidl_message_type_support_t *type_support(const mwr_config *c, char *err,
                                                         size_t err_len) {
  /* kept loaded for the process's life: the RMW keeps pointers into it */
  void *lib = dlopen(c->type_library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fail(err, err_len, "loading the type support %s: %s", c->type_library, dlerror());
    return NULL;
  }
  typedef const rosidl_message_type_support_t *(*get_fn)(void);
  get_fn get = (get_fn)dlsym(lib, c->type_symbol);
  if (!get) {
    fail(err, err_len, "%s has no %s", c->type_library, c->type_symbol);
    return NULL;
  }
  return get();
}

EXPORT void mwr_close(mwr_endpoint *e);

EXPORT mwr_endpoint *mwr_open(mwr_node *n, const mwr_config *c, char *err, size_t err_len) {
  const rosidl_message_type_support_t *ts = type_support(c, err, err_len);
  if (!ts) return NULL;
  mwr_endpoint *e = calloc(1, sizeof *e);
  if (!e) {
    fail(err, err_len, "out of memory");
    return NULL;
  }
  e->owner = n;
  rcl_allocator_t alloc = rcl_get_default_allocator();
  if (c->topic_out) {
    e->pub = rcl_get_zero_initialized_publisher();
    rcl_publisher_options_t po = rcl_publisher_get_default_options();
    set_qos(&po.qos, c);
    if (rcl_publisher_init(&e->pub, &n->node, ts, c->topic_out, &po) != RCL_RET_OK) {
      fail(err, err_len, "rcl_publisher_init(%s)", c->topic_out);
      mwr_close(e);
      return NULL;
    }
    e->has_pub = 1;
  }
  if (c->topic_in) {
    e->sub = rcl_get_zero_initialized_subscription();
    rcl_subscription_options_t so = rcl_subscription_get_default_options();
    set_qos(&so.qos, c);
    if (rcl_subscription_init(&e->sub, &n->node, ts, c->topic_in, &so) != RCL_RET_OK) {
      fail(err, err_len, "rcl_subscription_init(%s)", c->topic_in);
      mwr_close(e);
      return NULL;
    }
    e->has_sub = 1;
    e->wait_set = rcl_get_zero_initialized_wait_set();
    if (rcl_wait_set_init(&e->wait_set, 1, 0, 0, 0, 0, 0, &n->context, alloc) != RCL_RET_OK) {
      fail(err, err_len, "rcl_wait_set_init");
      mwr_close(e);
      return NULL;
    }
    e->has_wait_set = 1;
    e->taken = rmw_get_zero_initialized_serialized_message();
    if (rmw_serialized_message_init(&e->taken, 0, &alloc) != RMW_RET_OK) {
      fail(err, err_len, "rmw_serialized_message_init");
      mwr_close(e);
      return NULL;
    }
  }
  return e;
}

EXPORT void mwr_close(mwr_endpoint *e) {
  if (!e) return;
  if (e->has_wait_set) ignore(rcl_wait_set_fini(&e->wait_set));
  if (e->has_sub) ignore(rcl_subscription_fini(&e->sub, &e->owner->node));
  if (e->taken.allocator.deallocate) ignore(rmw_serialized_message_fini(&e->taken));
  if (e->has_pub) ignore(rcl_publisher_fini(&e->pub, &e->owner->node));
  rcl_reset_error();
  free(e);
}

/* Publish `len` CDR bytes as they are. 0 ok, -1 the RMW refused (its error in err). */
EXPORT int mwr_publish(mwr_endpoint *e, const unsigned char *cdr, size_t len, char *err,
                       size_t err_len) {
  rcl_serialized_message_t m = rmw_get_zero_initialized_serialized_message();
  m.buffer = (unsigned char *)cdr; /* only read by the RMW */
  m.buffer_length = len;
  m.buffer_capacity = len;
  m.allocator = rcl_get_default_allocator();
  if (rcl_publish_serialized_message(&e->pub, &m, NULL) != RCL_RET_OK) {
    fail(err, err_len, "rcl_publish_serialized_message");
    return -1;
  }
  return 0;
}

/* Take one message: 1 (its CDR at *data, *len bytes, valid until the next take), 0 none,
 * -1 error. */
EXPORT int mwr_take(mwr_endpoint *e, const unsigned char **data, size_t *len, char *err,
                    size_t err_len) {
  rmw_message_info_t info = rmw_get_zero_initialized_message_info();
  rcl_ret_t rc = rcl_take_serialized_message(&e->sub, &e->taken, &info, NULL);
  if (rc == RCL_RET_SUBSCRIPTION_TAKE_FAILED) {
    rcl_reset_error();
    return 0;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_take_serialized_message");
    return -1;
  }
  *data = e->taken.buffer;
  *len = e->taken.buffer_length;
  return 1;
}

/* Wait at most timeout_ns for the subscription: 1 ready, 0 timed out, -1 error. */
EXPORT int mwr_wait(mwr_endpoint *e, long long timeout_ns, char *err, size_t err_len) {
  if (rcl_wait_set_clear(&e->wait_set) != RCL_RET_OK ||
      rcl_wait_set_add_subscription(&e->wait_set, &e->sub, NULL) != RCL_RET_OK) {
    fail(err, err_len, "preparing the wait set");
    return -1;
  }
  rcl_ret_t rc = rcl_wait(&e->wait_set, timeout_ns);
  if (rc == RCL_RET_TIMEOUT) {
    rcl_reset_error();
    return 0;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_wait");
    return -1;
  }
  return e->wait_set.subscriptions[0] != NULL;
}

/* Subscriptions matched to the publisher and publishers matched to the subscription (-1 where
 * the endpoint has none); 0 ok, -1 error. */
EXPORT int mwr_matched(mwr_endpoint *e, int *subs, int *pubs) {
  size_t n = 0;
  *subs = -1;
  *pubs = -1;
  if (e->has_pub) {
    if (rcl_publisher_get_subscription_count(&e->pub, &n) != RCL_RET_OK) goto error;
    *subs = (int)n;
  }
  if (e->has_sub) {
    if (rcl_subscription_get_publisher_count(&e->sub, &n) != RCL_RET_OK) goto error;
    *pubs = (int)n;
  }
  return 0;
error:
  rcl_reset_error();
  return -1;
}

/* Publishers and subscriptions of the ROS topic `topic` in the whole graph as this endpoint's
 * node sees it (rcl_count_publishers / rcl_count_subscribers: every node discovered so far,
 * this one included); 0 ok, -1 error. */
EXPORT int mwr_graph_counts(mwr_endpoint *e, const char *topic, int *pubs, int *subs) {
  size_t n = 0;
  if (rcl_count_publishers(&e->owner->node, topic, &n) != RCL_RET_OK) goto error;
  *pubs = (int)n;
  if (rcl_count_subscribers(&e->owner->node, topic, &n) != RCL_RET_OK) goto error;
  *subs = (int)n;
  return 0;
error:
  rcl_reset_error();
  return -1;
}

/* --opt loan=on: whether the RMW lends this publisher's messages (rcl_publisher_can_loan_messages:
 * rcl_borrow_loaned_message / rcl_publish_loaned_message would work): 1 yes, 0 no, -1 no
 * publisher. */
EXPORT int mwr_can_loan(mwr_endpoint *e) {
  if (!e->has_pub) return -1;
  return rcl_publisher_can_loan_messages(&e->pub) ? 1 : 0;
}

/* A reliable publisher: wait at most timeout_ns until its subscriptions acknowledged all. */
EXPORT int mwr_wait_acked(mwr_endpoint *e, long long timeout_ns) {
  if (!e->has_pub) return 0;
  rcl_ret_t rc = rcl_publisher_wait_for_all_acked(&e->pub, timeout_ns);
  rcl_reset_error();
  return rc == RCL_RET_OK ? 0 : -1;
}

/* --opt timer=rcl: an rcl timer on the steady clock and the wait set it waits in, what an rclc
 * or rclcpp node's timer is (rcl_timer_init2, rcl_wait, rcl_timer_call). */
typedef struct mwr_timer {
  mwr_endpoint *endpoint; /* its subscription (a ping's) waits in the timer's wait set too */
  rcl_clock_t clock;
  rcl_timer_t timer;
  rcl_wait_set_t wait_set;
  int has_clock, has_timer, has_wait_set;
} mwr_timer;

EXPORT void mwr_timer_close(mwr_timer *t) {
  if (!t) return;
  if (t->has_wait_set) ignore(rcl_wait_set_fini(&t->wait_set));
  if (t->has_timer) ignore(rcl_timer_fini(&t->timer));
  if (t->has_clock) ignore(rcl_clock_fini(&t->clock));
  rcl_reset_error();
  free(t);
}

/* A timer of `period_ns` in the endpoint's context, started now: its first tick is one period
 * from now. Its wait set holds the timer and, where the endpoint has one (a ping), the
 * endpoint's subscription: one wait for either, as a node's executor waits for its timer and
 * subscription callbacks. NULL on error (in err). */
EXPORT mwr_timer *mwr_timer_open(mwr_endpoint *e, long long period_ns, char *err,
                                 size_t err_len) {
  mwr_timer *t = calloc(1, sizeof *t);
  if (!t) {
    fail(err, err_len, "out of memory");
    return NULL;
  }
  rcl_allocator_t alloc = rcl_get_default_allocator();
  if (rcl_clock_init(RCL_STEADY_TIME, &t->clock, &alloc) != RCL_RET_OK) {
    fail(err, err_len, "rcl_clock_init(RCL_STEADY_TIME)");
    mwr_timer_close(t);
    return NULL;
  }
  t->endpoint = e;
  t->has_clock = 1;
  t->timer = rcl_get_zero_initialized_timer();
  if (rcl_timer_init2(&t->timer, &t->clock, &e->owner->context, period_ns, NULL, alloc, true) !=
      RCL_RET_OK) {
    fail(err, err_len, "rcl_timer_init2(period %lld ns)", period_ns);
    mwr_timer_close(t);
    return NULL;
  }
  t->has_timer = 1;
  t->wait_set = rcl_get_zero_initialized_wait_set();
  if (rcl_wait_set_init(&t->wait_set, e->has_sub ? 1 : 0, 0, 1, 0, 0, 0, &e->owner->context,
                        alloc) != RCL_RET_OK) {
    fail(err, err_len, "rcl_wait_set_init (a timer)");
    mwr_timer_close(t);
    return NULL;
  }
  t->has_wait_set = 1;
  return t;
}

/* Wait at most timeout_ns for the timer's tick or (a ping) a message on the endpoint's
 * subscription. A tick is called (rcl_timer_call: the next tick one period on, ticks already
 * missed skipped as rcl does). Returns a bit set: 1 the timer ticked, 2 a message is there to
 * take; 0 timed out; -1 error. */
EXPORT int mwr_timer_wait(mwr_timer *t, long long timeout_ns, char *err, size_t err_len) {
  int sub = t->endpoint->has_sub;
  if (rcl_wait_set_clear(&t->wait_set) != RCL_RET_OK ||
      rcl_wait_set_add_timer(&t->wait_set, &t->timer, NULL) != RCL_RET_OK ||
      (sub && rcl_wait_set_add_subscription(&t->wait_set, &t->endpoint->sub, NULL) !=
                  RCL_RET_OK)) {
    fail(err, err_len, "preparing the timer's wait set");
    return -1;
  }
  rcl_ret_t rc = rcl_wait(&t->wait_set, timeout_ns);
  if (rc == RCL_RET_TIMEOUT) {
    rcl_reset_error();
    return 0;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_wait (timer)");
    return -1;
  }
  int ready = (sub && t->wait_set.subscriptions[0] != NULL) ? 2 : 0;
  if (t->wait_set.timers[0] == NULL) return ready;
  rc = rcl_timer_call(&t->timer);
  if (rc == RCL_RET_TIMER_CANCELED) {
    rcl_reset_error();
    return ready;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_timer_call");
    return -1;
  }
  return ready | 1;
}
