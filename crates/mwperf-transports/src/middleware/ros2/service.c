/* mwperf's ros2 services: an rcl service server and an rcl client of one node, each with the wait
 * set it waits in (service.rs). Compiled after shim.c in the same unit (compile.rs), so it uses
 * shim.c's fail/ignore/set_qos and its node.
 *
 * The type is rcl_interfaces/srv/GetParameters (installed with rcl itself; no installed service
 * has bytes on both sides, service.rs says why this one): the request's bytes travel base64 in
 * names[0] (written and read by the Rust side), the reply's bytes as they are in
 * values[0].byte_array_value. rcl has no serialized service calls, so the messages are the
 * generated C structs, whose strings and sequences point at the caller's buffers while a
 * request or reply is sent (no copy) and are taken into structs this file owns. */

#include <rcl/client.h>
#include <rcl/graph.h>
#include <rcl/service.h>
#include <rcl_interfaces/msg/parameter_type.h>
#include <rcl_interfaces/srv/get_parameters.h>

typedef struct mwr_server {
  mwr_node *owner;
  int has_service, has_wait_set, has_request;
  rcl_service_t service;
  rcl_wait_set_t wait_set;
  rcl_interfaces__srv__GetParameters_Request request; /* the last taken */
} mwr_server;

typedef struct mwr_client {
  mwr_node *owner;
  int has_client, has_wait_set, has_response;
  rcl_client_t client;
  rcl_wait_set_t wait_set;
  rcl_interfaces__srv__GetParameters_Response response; /* the last taken */
} mwr_client;

static const rosidl_service_type_support_t *service_type(void) {
  return ROSIDL_GET_SRV_TYPE_SUPPORT(rcl_interfaces, srv, GetParameters);
}

/* The bytes an rmw_request_id_t takes (the server's handle to a request, kept by the caller). */
EXPORT size_t mwr_request_id_size(void) { return sizeof(rmw_request_id_t); }

EXPORT void mwr_server_close(mwr_server *s);

/* A server of the service c->topic_out (a ROS 2 service name), QoS as topics. */
EXPORT mwr_server *mwr_server_open(mwr_node *n, const mwr_config *c, char *err, size_t err_len) {
  mwr_server *s = calloc(1, sizeof *s);
  if (!s) {
    fail(err, err_len, "out of memory");
    return NULL;
  }
  s->owner = n;
  s->service = rcl_get_zero_initialized_service();
  rcl_service_options_t o = rcl_service_get_default_options();
  set_qos(&o.qos, c);
  if (rcl_service_init(&s->service, &n->node, service_type(), c->topic_out, &o) != RCL_RET_OK) {
    fail(err, err_len, "rcl_service_init(%s)", c->topic_out);
    mwr_server_close(s);
    return NULL;
  }
  s->has_service = 1;
  s->wait_set = rcl_get_zero_initialized_wait_set();
  if (rcl_wait_set_init(&s->wait_set, 0, 0, 0, 0, 1, 0, &n->context,
                        rcl_get_default_allocator()) != RCL_RET_OK) {
    fail(err, err_len, "rcl_wait_set_init");
    mwr_server_close(s);
    return NULL;
  }
  s->has_wait_set = 1;
  if (!rcl_interfaces__srv__GetParameters_Request__init(&s->request)) {
    fail(err, err_len, "rcl_interfaces__srv__GetParameters_Request__init");
    mwr_server_close(s);
    return NULL;
  }
  s->has_request = 1;
  return s;
}

EXPORT void mwr_server_close(mwr_server *s) {
  if (!s) return;
  if (s->has_request) rcl_interfaces__srv__GetParameters_Request__fini(&s->request);
  if (s->has_wait_set) ignore(rcl_wait_set_fini(&s->wait_set));
  if (s->has_service) ignore(rcl_service_fini(&s->service, &s->owner->node));
  rcl_reset_error();
  free(s);
}

/* Take one request: 1 (names[0]'s text at *text, *len bytes, NULL/0 when it has no names; valid
 * until the next take; its id into id[0..mwr_request_id_size()]), 0 none, -1 error. */
EXPORT int mwr_server_take(mwr_server *s, const unsigned char **text, size_t *len,
                           unsigned char *id, char *err, size_t err_len) {
  rmw_request_id_t header;
  rcl_ret_t rc = rcl_take_request(&s->service, &header, &s->request);
  if (rc == RCL_RET_SERVICE_TAKE_FAILED) {
    rcl_reset_error();
    return 0;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_take_request");
    return -1;
  }
  memcpy(id, &header, sizeof header);
  if (s->request.names.size > 0 && s->request.names.data[0].data) {
    *text = (const unsigned char *)s->request.names.data[0].data;
    *len = s->request.names.data[0].size;
  } else {
    *text = NULL;
    *len = 0;
  }
  return 1;
}

/* Answer the request `id` (from mwr_server_take) with one byte-array value holding `len`
 * bytes. 0 ok, -1 the RMW refused. */
EXPORT int mwr_server_reply(mwr_server *s, const unsigned char *id, const unsigned char *data,
                            size_t len, char *err, size_t err_len) {
  rmw_request_id_t header;
  memcpy(&header, id, sizeof header);
  static char empty[1] = "";
  rcl_interfaces__msg__ParameterValue value;
  memset(&value, 0, sizeof value); /* empty sequences everywhere else */
  value.type = rcl_interfaces__msg__ParameterType__PARAMETER_BYTE_ARRAY;
  value.string_value.data = empty; /* a valid empty string: capacity > size, NUL at size */
  value.string_value.size = 0;
  value.string_value.capacity = 1;
  value.byte_array_value.data = (unsigned char *)data; /* only read while it is sent */
  value.byte_array_value.size = len;
  value.byte_array_value.capacity = len;
  rcl_interfaces__srv__GetParameters_Response response;
  response.values.data = &value;
  response.values.size = 1;
  response.values.capacity = 1;
  if (rcl_send_response(&s->service, &header, &response) != RCL_RET_OK) {
    fail(err, err_len, "rcl_send_response");
    return -1;
  }
  return 0;
}

/* Wait at most timeout_ns for a request: 1 ready, 0 timed out, -1 error. */
EXPORT int mwr_server_wait(mwr_server *s, long long timeout_ns, char *err, size_t err_len) {
  if (rcl_wait_set_clear(&s->wait_set) != RCL_RET_OK ||
      rcl_wait_set_add_service(&s->wait_set, &s->service, NULL) != RCL_RET_OK) {
    fail(err, err_len, "preparing the wait set");
    return -1;
  }
  rcl_ret_t rc = rcl_wait(&s->wait_set, timeout_ns);
  if (rc == RCL_RET_TIMEOUT) {
    rcl_reset_error();
    return 0;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_wait");
    return -1;
  }
  return s->wait_set.services[0] != NULL;
}

EXPORT void mwr_client_close(mwr_client *c);

/* A client of the service c->topic_out, QoS as topics. */
EXPORT mwr_client *mwr_client_open(mwr_node *n, const mwr_config *cfg, char *err,
                                   size_t err_len) {
  mwr_client *c = calloc(1, sizeof *c);
  if (!c) {
    fail(err, err_len, "out of memory");
    return NULL;
  }
  c->owner = n;
  c->client = rcl_get_zero_initialized_client();
  rcl_client_options_t o = rcl_client_get_default_options();
  set_qos(&o.qos, cfg);
  if (rcl_client_init(&c->client, &n->node, service_type(), cfg->topic_out, &o) != RCL_RET_OK) {
    fail(err, err_len, "rcl_client_init(%s)", cfg->topic_out);
    mwr_client_close(c);
    return NULL;
  }
  c->has_client = 1;
  c->wait_set = rcl_get_zero_initialized_wait_set();
  if (rcl_wait_set_init(&c->wait_set, 0, 0, 0, 1, 0, 0, &n->context,
                        rcl_get_default_allocator()) != RCL_RET_OK) {
    fail(err, err_len, "rcl_wait_set_init");
    mwr_client_close(c);
    return NULL;
  }
  c->has_wait_set = 1;
  if (!rcl_interfaces__srv__GetParameters_Response__init(&c->response)) {
    fail(err, err_len, "rcl_interfaces__srv__GetParameters_Response__init");
    mwr_client_close(c);
    return NULL;
  }
  c->has_response = 1;
  return c;
}

EXPORT void mwr_client_close(mwr_client *c) {
  if (!c) return;
  if (c->has_response) rcl_interfaces__srv__GetParameters_Response__fini(&c->response);
  if (c->has_wait_set) ignore(rcl_wait_set_fini(&c->wait_set));
  if (c->has_client) ignore(rcl_client_fini(&c->client, &c->owner->node));
  rcl_reset_error();
  free(c);
}

/* Send a request whose names[0] is `text` (`len` bytes, NUL-terminated at text[len]); its
 * sequence number into *seq. 0 ok, -1 the RMW refused. */
EXPORT int mwr_client_call(mwr_client *c, const char *text, size_t len, long long *seq,
                           char *err, size_t err_len) {
  rosidl_runtime_c__String name;
  name.data = (char *)text; /* only read while it is sent */
  name.size = len;
  name.capacity = len + 1;
  rcl_interfaces__srv__GetParameters_Request request;
  request.names.data = &name;
  request.names.size = 1;
  request.names.capacity = 1;
  int64_t sn = 0;
  if (rcl_send_request(&c->client, &request, &sn) != RCL_RET_OK) {
    fail(err, err_len, "rcl_send_request");
    return -1;
  }
  *seq = sn;
  return 0;
}

/* Take one reply: 1 (values[0]'s byte array at *data, *len bytes, NULL/0 when it has no values;
 * valid until the next take; the call's sequence number into *seq), 0 none, -1 error. */
EXPORT int mwr_client_take(mwr_client *c, const unsigned char **data, size_t *len,
                           long long *seq, char *err, size_t err_len) {
  rmw_request_id_t header;
  rcl_ret_t rc = rcl_take_response(&c->client, &header, &c->response);
  if (rc == RCL_RET_CLIENT_TAKE_FAILED) {
    rcl_reset_error();
    return 0;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_take_response");
    return -1;
  }
  *seq = header.sequence_number;
  if (c->response.values.size > 0) {
    *data = c->response.values.data[0].byte_array_value.data;
    *len = c->response.values.data[0].byte_array_value.size;
  } else {
    *data = NULL;
    *len = 0;
  }
  return 1;
}

/* Wait at most timeout_ns for a reply: 1 ready, 0 timed out, -1 error. */
EXPORT int mwr_client_wait(mwr_client *c, long long timeout_ns, char *err, size_t err_len) {
  if (rcl_wait_set_clear(&c->wait_set) != RCL_RET_OK ||
      rcl_wait_set_add_client(&c->wait_set, &c->client, NULL) != RCL_RET_OK) {
    fail(err, err_len, "preparing the wait set");
    return -1;
  }
  rcl_ret_t rc = rcl_wait(&c->wait_set, timeout_ns);
  if (rc == RCL_RET_TIMEOUT) {
    rcl_reset_error();
    return 0;
  }
  if (rc != RCL_RET_OK) {
    fail(err, err_len, "rcl_wait");
    return -1;
  }
  return c->wait_set.clients[0] != NULL;
}

/* Whether the client's server is known (its request reader and reply writer matched): 1 yes,
 * 0 no, -1 error. */
EXPORT int mwr_client_ready(mwr_client *c) {
  bool ready = false;
  if (rcl_service_server_is_available(&c->owner->node, &c->client, &ready) != RCL_RET_OK) {
    rcl_reset_error();
    return -1;
  }
  return ready ? 1 : 0;
}
