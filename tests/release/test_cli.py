"""rayboot's command line as a black box: help, errors and exit codes (DESIGN.md, Interfaces)."""
import subprocess


def run(binary, *args, env=None):
    return subprocess.run([str(binary), *args], env=env if env is not None else {}, capture_output=True,
                          text=True, timeout=5)


def test_help_documents_every_variable_and_flag(rayboot_bin):
    out = run(rayboot_bin, "--help").stdout
    for word in ("RAYBOOT_ROLE", "RAYBOOT_HEAD_ADDRESS", "RAYBOOT_PLUGIN_ARGS", "RAYBOOT_ROOT",
                 "RAYBOOT_RAY", "RAYBOOT_RAY_START_ARGS", "RAYBOOT_WORKERS_EXPECTED", "RAYBOOT_WAIT_TIMEOUT",
                 "RAYBOOT_WORKERS_TIMEOUT", "RAYBOOT_GRACE_PERIOD", "RAYBOOT_HEAD_LOSS_TIMEOUT",
                 "RAYBOOT_EVICTION_EXIT_CODE", "RAYBOOT_POD_IP", "RAYBOOT_TERMINATION_LOG", "RAYBOOT_POD_NAME",
                 "RAYBOOT_POD_NAMESPACE", "RAYBOOT_CLUSTER_DOMAIN", "--head", "--headContainer",
                 "--worker", "--workerContainer", "--port", "--dashboardPort", "--clientPort", "plan",
                 "--format", "--log-format", "JOB_COMPLETION_INDEX", "NVIDIA_VISIBLE_DEVICES",
                 "LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX", "RAYBOOT_WORKER_PARALLELISM",
                 "/etc/podinfo/labels", "RAYBOOT_RENDEZVOUS_PORT"):
        assert word in out, f"--help does not mention {word}"


def test_unknown_option_exits_2_naming_it(rayboot_bin):
    out = run(rayboot_bin, "--frobnicate", "plan")
    assert out.returncode == 2
    assert "--frobnicate" in out.stderr


def test_bad_plugin_flag_on_command_line_exits_2(rayboot_bin):
    out = run(rayboot_bin, "--clientServerPort=10001", "plan")
    assert out.returncode == 2
    assert "clientServerPort" in out.stderr


def test_plugin_flag_value_as_next_word(rayboot_bin):
    env = {"RAYBOOT_ROLE": "head", "HOSTNAME": "h", "RAYBOOT_ROOT": "/nonexistent"}
    out = run(rayboot_bin, "--port", "6390", "plan", env=env)
    assert out.returncode == 0, out.stderr
    assert '"--port=6390"' in out.stdout


def test_command_line_flag_wins_over_plugin_args_env(rayboot_bin):
    env = {"RAYBOOT_ROLE": "head", "HOSTNAME": "h", "RAYBOOT_ROOT": "/nonexistent",
           "RAYBOOT_PLUGIN_ARGS": "--port=6380"}
    out = run(rayboot_bin, "plan", "--port=6391", env=env)
    assert out.returncode == 0, out.stderr
    assert '"--port=6391"' in out.stdout


def test_json_log_format(rayboot_bin):
    out = run(rayboot_bin, "--log-format=json", "plan")
    assert out.returncode == 2
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("{") and '"level":"error"' in line and "RAYBOOT_ROLE" in line


def test_text_plan(rayboot_bin):
    env = {"RAYBOOT_ROLE": "worker", "HOSTNAME": "w", "RAYBOOT_ROOT": "/nonexistent",
           "RAYBOOT_HEAD_ADDRESS": "head.example:6379"}
    out = run(rayboot_bin, "plan", "--format=text", env=env)
    assert out.returncode == 0, out.stderr
    assert "role:" in out.stdout and "worker" in out.stdout
    assert "--address=head.example:6379" in out.stdout


def test_command_after_double_dash_is_kept_verbatim(rayboot_bin):
    env = {"RAYBOOT_ROLE": "head", "HOSTNAME": "h", "RAYBOOT_ROOT": "/nonexistent"}
    args = ["python", "-c", "print('$(x); `y`')", "--port=1"]
    out = run(rayboot_bin, "plan", "--", *args, env=env)
    assert out.returncode == 0, out.stderr
    import json
    assert json.loads(out.stdout)["command"] == args


def test_sidecar_version_and_unknown_option(sidecar_bin):
    assert run(sidecar_bin, "--version").returncode == 0
    bad = run(sidecar_bin, "--nope")
    assert bad.returncode == 2 and "--nope" in bad.stderr
