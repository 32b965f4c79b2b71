/* libFuzzer target: the drain as a GCS and a prober could drive it. The input is first decoded as
 * a DrainNodeReply (lib/ray/gcs.c's gcs_decode_drain), then read as a script of events for lib/ray/drain.c's
 * step machine: time passing, and the prober's replies (any status, even one no reply has, any
 * departure, any reason text, fields filled to the brim and NUL-terminated only as
 * prober_receive does). The machine must only move
 * forward (requesting, asking how a gone node left, watching, done), stay done once done, ask only
 * for DrainNode or FindNode, and for the departure only while asking,
 * never wake before now or after its deadline, and keep its strings NUL-terminated. */
#include <string.h>

#include "drain.h"
#include "fuzz.h"
#include "gcs.h"

/* Events per input: enough for a long watch; a longer script adds nothing new. */
#define FUZZ_EVENTS_MAX 128

struct script {
    const uint8_t *p;
    const uint8_t *end;
};

static uint8_t next_byte(struct script *s)
{
    return s->p < s->end ? *s->p++ : 0;
}

/* One reply as the parent sees it after prober_receive: any bytes, the strings cut at their last
 * byte. */
static void make_reply(struct script *s, uint8_t control, struct prober_reply *r)
{
    size_t len = next_byte(s);
    char *field = (control & 4) ? r->reason : r->value;
    size_t cap = (control & 4) ? sizeof(r->reason) : sizeof(r->value);
    uint8_t departure;

    memset(r, 0, sizeof(*r));
    r->status = (control & 2) ? PROBER_OK : (control & 32) ? PROBER_ABSENT : PROBER_FAILED;
    if (control & 16)
        memcpy(&r->status, (int[]){(int)next_byte(s) - 128}, sizeof(int)); /* any int, as the socket carries */
    departure = next_byte(s);
    r->departure = (enum gcs_departure)departure;
    if (control & 8)
        memset(field, 'x', cap); /* no NUL of the prober's own */
    if (len > (size_t)(s->end - s->p))
        len = (size_t)(s->end - s->p);
    memcpy(field, s->p, len < cap ? len : cap);
    s->p += len;
    r->reason[sizeof(r->reason) - 1] = '\0';
    r->addr[sizeof(r->addr) - 1] = '\0';
    r->value[sizeof(r->value) - 1] = '\0';
}

static void check(const struct drain *d, enum drain_state before, long now_ms)
{
    if (d->state < before || d->state > DRAIN_DONE || d->state == DRAIN_IDLE ||
        (d->state == DRAIN_DONE && d->outcome > DRAIN_GCS_LOST) || !fuzz_terminated(d->detail, sizeof(d->detail)) ||
        drain_elapsed_ms(d, now_ms) < 0)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct script s = {data, data + size};
    struct drain d;
    struct errbuf err;
    long now_ms = 1000, budget_ms;

    (void)gcs_decode_drain(data, size, &err);
    budget_ms = ((long)next_byte(&s) << 8 | next_byte(&s)) * 10 - 1000; /* may be negative */
    drain_begin(&d, "10.0.0.1", 6379, "10.0.0.7", "EvictionByEvictionAPI: Eviction API: evicting", budget_ms, now_ms);
    for (int e = 0; e < FUZZ_EVENTS_MAX && s.p < s.end; e++) {
        struct prober_request req;
        struct prober_reply reply;
        enum drain_state before = d.state;
        uint8_t control = next_byte(&s);
        long wake_ms = -1;
        enum drain_next rc;

        now_ms += (long)next_byte(&s) * 8;
        rc = drain_step(&d, now_ms, &req, &wake_ms);
        if ((rc != DRAIN_NEXT_ASK && rc != DRAIN_NEXT_SLEEP && rc != DRAIN_NEXT_DONE) ||
            (before == DRAIN_DONE && rc != DRAIN_NEXT_DONE) ||
            (rc == DRAIN_NEXT_SLEEP && (wake_ms <= now_ms || wake_ms > d.deadline_ms)))
            __builtin_trap();
        if (rc == DRAIN_NEXT_ASK && ((req.op != PROBE_DRAIN && req.op != PROBE_FIND_NODE &&
                                      !(req.op == PROBE_DEPARTURE && before == DRAIN_ASKING)) ||
                                     !fuzz_terminated(req.text, sizeof(req.text)) ||
                                     strcmp(req.addr, "10.0.0.1") != 0 || strcmp(req.name, "10.0.0.7") != 0))
            __builtin_trap();
        check(&d, before, now_ms);
        before = d.state;
        if (rc == DRAIN_NEXT_ASK || (control & 64)) { /* also replies nobody asked for */
            make_reply(&s, control, &reply);
            drain_reply(&d, now_ms, (control & 1) ? NULL : &reply);
            check(&d, before, now_ms);
        }
    }
    return 0;
}
