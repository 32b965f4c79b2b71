/* /metrics in Prometheus' text format: drains, their outcome and duration, readiness, and the
 * requests the sidecar turned away. */
#include "metrics.h"

#include <stdio.h>

#include "http.h"

void metrics_render(const struct sidecar *s, char *out, size_t cap)
{
    unsigned long cut = (s->http ? http_refused(s->http) : 0) + (s->http_drain ? http_refused(s->http_drain) : 0);
    snprintf(
        out, cap,
        "# HELP rayboot_sidecar_ready 1 when this pod's Ray node is ALIVE (head: its GCS is SERVING).\n"
        "# TYPE rayboot_sidecar_ready gauge\n"
        "rayboot_sidecar_ready %d\n"
        "# HELP rayboot_sidecar_drains_started_total Drains started, by /drain or SIGTERM.\n"
        "# TYPE rayboot_sidecar_drains_started_total counter\n"
        "rayboot_sidecar_drains_started_total %lu\n"
        "# HELP rayboot_sidecar_drains_finished_total Drains finished, by outcome.\n"
        "# TYPE rayboot_sidecar_drains_finished_total counter\n"
        "rayboot_sidecar_drains_finished_total{outcome=\"left\"} %lu\n"
        "rayboot_sidecar_drains_finished_total{outcome=\"deadline\"} %lu\n"
        "rayboot_sidecar_drains_finished_total{outcome=\"failed\"} %lu\n"
        "rayboot_sidecar_drains_finished_total{outcome=\"gcs-lost\"} %lu\n"
        "# HELP rayboot_sidecar_drains_forgotten_total Drains no deletion of the pod followed.\n"
        "# TYPE rayboot_sidecar_drains_forgotten_total counter\n"
        "rayboot_sidecar_drains_forgotten_total %lu\n"
        "# HELP rayboot_sidecar_last_drain_duration_seconds How long the last finished drain took.\n"
        "# TYPE rayboot_sidecar_last_drain_duration_seconds gauge\n"
        "rayboot_sidecar_last_drain_duration_seconds %.3f\n"
        "# HELP rayboot_sidecar_http_requests_total Requests answered by the sidecar.\n"
        "# TYPE rayboot_sidecar_http_requests_total counter\n"
        "rayboot_sidecar_http_requests_total %lu\n"
        "# HELP rayboot_sidecar_drain_refused_total Requests for /drain on the probes port (not served there).\n"
        "# TYPE rayboot_sidecar_drain_refused_total counter\n"
        "rayboot_sidecar_drain_refused_total %lu\n"
        "# HELP rayboot_sidecar_drain_guarded 1 when a /drain drains only a pod that is going (its Pod is read).\n"
        "# TYPE rayboot_sidecar_drain_guarded gauge\n"
        "rayboot_sidecar_drain_guarded %d\n"
        "# HELP rayboot_sidecar_drain_asks_refused_total Reads of this Pod that refused /drain: it was not going.\n"
        "# TYPE rayboot_sidecar_drain_asks_refused_total counter\n"
        "rayboot_sidecar_drain_asks_refused_total %lu\n"
        "# HELP rayboot_sidecar_drain_port_listening 0 while another process holds the drain port.\n"
        "# TYPE rayboot_sidecar_drain_port_listening gauge\n"
        "rayboot_sidecar_drain_port_listening %d\n"
        "# HELP rayboot_sidecar_http_connections_cut_total Connections cut: making way, past their deadline, or "
        "with a body.\n"
        "# TYPE rayboot_sidecar_http_connections_cut_total counter\n"
        "rayboot_sidecar_http_connections_cut_total %lu\n",
        s->ready ? 1 : 0, s->drains_started, s->drains_left, s->drains_deadline, s->drains_failed, s->drains_gcs_lost,
        s->drains_forgotten, (double)s->last_drain_ms / 1000.0, s->http_requests, s->drain_refused, s->guarded ? 1 : 0,
        s->asks_refused, s->http_drain ? 1 : 0, cut);
}
