/*
 * amqp_load: a small AMQP 1.0 load generator on proton-c's proactor, written for
 * benchmarks/broker_bench.py (which builds it with gcc, next to Debian's proton examples).
 *
 *   amqp_load send|receive HOST PORT ADDRESS COUNT [presettled] [durable] [size=BYTES] [inflight=N]
 *
 * send: one connection, one sender link; sends COUNT messages with a BYTES-long binary body
 * (default 256) as fast as credit allows, unsettled (waits for every outcome) or presettled
 * (settled as sent), durable or not; exits 0 when all are accepted (or written, presettled).
 * inflight=N: at most N unsettled sends at a time; inflight=1 sends the next message only when
 * the last one's outcome arrived, the physical limit of a synchronous send from any client.
 * receive: one connection, one receiver link granted credit for all COUNT messages at once (as
 * Debian's receive example does: RabbitMQ 3.10's AMQP 1.0 plugin delivers past the credit when
 * a window is topped up, and a presettled message it over-delivers cannot be given back);
 * accepts each message (or takes it presettled) without decoding it; prints "ready" once the
 * link is attached and exits 0 after COUNT messages. An unsettled message beyond the credit is
 * released, for another receiver to take. inflight=N (receive): credit for N messages at a
 * time, topped up as each is taken; inflight=1 is a prefetch-0 receive, one credit per message,
 * the physical limit of a JMS pull consumer's receive(). Why not only the examples: they have no
 * presettled or durable mode.
 */
#include <proton/condition.h>
#include <proton/connection.h>
#include <proton/delivery.h>
#include <proton/link.h>
#include <proton/message.h>
#include <proton/proactor.h>
#include <proton/session.h>
#include <proton/transport.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  const char *host, *port, *address;
  int count;
  bool sender, presettled, durable;
  size_t size;
  int inflight; /* 0: as many as credit allows */
  pn_proactor_t *proactor;
  char *encoded;
  size_t encoded_len;
  char scratch[1 << 16];
  int sent, done;
  char container[64];
} app_t;

static int exit_code = 0;

static void fail_on(pn_event_t *e, pn_condition_t *cond) {
  if (pn_condition_is_set(cond)) {
    fprintf(stderr, "amqp_load: %s: %s: %s\n", pn_event_type_name(pn_event_type(e)),
            pn_condition_get_name(cond), pn_condition_get_description(cond));
    pn_connection_close(pn_event_connection(e));
    exit_code = 1;
  }
}

static void encode_once(app_t *app) {
  /* every message is the same: encode it once, send the bytes COUNT times */
  pn_message_t *m = pn_message();
  char *body = calloc(app->size ? app->size : 1, 1);
  memset(body, 'x', app->size);
  pn_message_set_durable(m, app->durable);
  pn_data_put_binary(pn_message_body(m), pn_bytes(app->size, body));
  size_t cap = app->size + 256;
  app->encoded = malloc(cap);
  app->encoded_len = cap;
  if (pn_message_encode(m, app->encoded, &app->encoded_len) != 0) {
    fprintf(stderr, "amqp_load: cannot encode the message\n");
    exit(2);
  }
  free(body);
  pn_message_free(m);
}

static void send_more(app_t *app, pn_link_t *l) {
  while (pn_link_credit(l) > 0 && app->sent < app->count &&
         (app->inflight <= 0 || app->presettled || app->sent - app->done < app->inflight)) {
    int tag = ++app->sent;
    pn_delivery_t *d = pn_delivery(l, pn_dtag((const char *)&tag, sizeof(tag)));
    pn_link_send(l, app->encoded, app->encoded_len);
    pn_link_advance(l);
    if (app->presettled) {
      pn_delivery_settle(d);
      if (++app->done == app->count) pn_connection_close(pn_session_connection(pn_link_session(l)));
    }
  }
}

static void on_delivery(app_t *app, pn_delivery_t *d) {
  pn_link_t *l = pn_delivery_link(d);
  if (app->sender) {
    if (!pn_delivery_updated(d)) return;
    if (pn_delivery_remote_state(d) != PN_ACCEPTED) {
      fprintf(stderr, "amqp_load: message not accepted (state %d)\n", (int)pn_delivery_remote_state(d));
      exit_code = 1;
      pn_connection_close(pn_session_connection(pn_link_session(l)));
      return;
    }
    pn_delivery_settle(d);
    if (++app->done == app->count) pn_connection_close(pn_session_connection(pn_link_session(l)));
    else if (app->inflight > 0) send_more(app, l);
    return;
  }
  if (!pn_delivery_readable(d) || pn_delivery_partial(d)) return;
  while (pn_link_recv(l, app->scratch, sizeof(app->scratch)) > 0) {
  }
  pn_link_advance(l);
  if (app->done >= app->count) {
    /* more than the credit granted (RabbitMQ 3.10 does this): give it back for the others */
    if (!pn_delivery_settled(d)) pn_delivery_update(d, PN_RELEASED);
    pn_delivery_settle(d);
    return;
  }
  if (!pn_delivery_settled(d)) pn_delivery_update(d, PN_ACCEPTED);
  pn_delivery_settle(d);
  if (++app->done == app->count) pn_connection_close(pn_session_connection(pn_link_session(l)));
  else if (app->inflight > 0 && app->done + pn_link_credit(l) < app->count) pn_link_flow(l, 1);
}

static bool handle(app_t *app, pn_event_t *e) {
  switch (pn_event_type(e)) {
  case PN_CONNECTION_INIT: {
    pn_connection_t *c = pn_event_connection(e);
    pn_connection_set_container(c, app->container);
    pn_connection_open(c);
    pn_session_t *s = pn_session(c);
    pn_session_open(s);
    pn_link_t *l = app->sender ? pn_sender(s, "amqp_load") : pn_receiver(s, "amqp_load");
    pn_terminus_set_address(app->sender ? pn_link_target(l) : pn_link_source(l), app->address);
    if (app->presettled) pn_link_set_snd_settle_mode(l, PN_SND_SETTLED);
    pn_link_open(l);
    if (!app->sender) pn_link_flow(l, app->inflight > 0 ? app->inflight : app->count);
    break;
  }
  case PN_LINK_REMOTE_OPEN:
    if (!app->sender) {
      printf("ready\n");
      fflush(stdout);
    }
    break;
  case PN_LINK_FLOW:
    if (app->sender) send_more(app, pn_event_link(e));
    break;
  case PN_DELIVERY:
    on_delivery(app, pn_event_delivery(e));
    break;
  case PN_TRANSPORT_CLOSED:
    fail_on(e, pn_transport_condition(pn_event_transport(e)));
    break;
  case PN_CONNECTION_REMOTE_CLOSE:
    fail_on(e, pn_connection_remote_condition(pn_event_connection(e)));
    pn_connection_close(pn_event_connection(e));
    break;
  case PN_SESSION_REMOTE_CLOSE:
    fail_on(e, pn_session_remote_condition(pn_event_session(e)));
    pn_connection_close(pn_event_connection(e));
    break;
  case PN_LINK_REMOTE_CLOSE:
  case PN_LINK_REMOTE_DETACH:
    fail_on(e, pn_link_remote_condition(pn_event_link(e)));
    pn_connection_close(pn_event_connection(e));
    break;
  case PN_PROACTOR_INACTIVE:
    return false;
  default:
    break;
  }
  return true;
}

int main(int argc, char **argv) {
  app_t *app = calloc(1, sizeof(app_t));
  if (argc < 6 || (strcmp(argv[1], "send") && strcmp(argv[1], "receive"))) {
    fprintf(stderr, "usage: %s send|receive HOST PORT ADDRESS COUNT [presettled] [durable] [size=N] [inflight=N]\n", argv[0]);
    return 2;
  }
  app->sender = strcmp(argv[1], "send") == 0;
  app->host = argv[2];
  app->port = argv[3];
  app->address = argv[4];
  app->count = atoi(argv[5]);
  app->size = 256;
  for (int i = 6; i < argc; i++) {
    if (!strcmp(argv[i], "presettled")) app->presettled = true;
    else if (!strcmp(argv[i], "durable")) app->durable = true;
    else if (!strncmp(argv[i], "size=", 5)) app->size = (size_t)atol(argv[i] + 5);
    else if (!strncmp(argv[i], "inflight=", 9)) app->inflight = atoi(argv[i] + 9);
  }
  snprintf(app->container, sizeof(app->container), "amqp_load-%s-%d", argv[1], (int)getpid());
  if (app->sender) encode_once(app);
  char addr[PN_MAX_ADDR];
  app->proactor = pn_proactor();
  pn_proactor_addr(addr, sizeof(addr), app->host, app->port);
  pn_proactor_connect2(app->proactor, NULL, NULL, addr);
  bool running = true;
  while (running) {
    pn_event_batch_t *events = pn_proactor_wait(app->proactor);
    for (pn_event_t *e = pn_event_batch_next(events); e; e = pn_event_batch_next(events)) {
      if (!handle(app, e)) running = false;
    }
    pn_proactor_done(app->proactor, events);
  }
  pn_proactor_free(app->proactor);
  if (app->done != app->count) {
    fprintf(stderr, "amqp_load: %d of %d messages\n", app->done, app->count);
    exit_code = 1;
  }
  return exit_code;
}
