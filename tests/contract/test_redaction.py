"""Secrets in what rayboot shows (issue 40): `rayboot plan`, which the docs ask users to paste into
bug reports, printed the Redis password of a fault-tolerant head (`--redis-password` in
`ray_start`, as KubeRay passes it); now its value is `<redacted>` in the JSON (same keys, same
`--name=value` strings) and the text, and so is a URL's password anywhere in the plan, while the
`ray start` that is exec'd (the fake ray's own argv) keeps the real values and no log line of the
running head shows them. Real processes: rayboot and the fake ray against a fake GCS."""
import json
import secrets

PY = "/usr/bin/python3"


def ft_head_env(gcs, password):
    return {"RAYBOOT_ROLE": "head", "RAYBOOT_PLUGIN_ARGS": f"--port={gcs.port}",
            "RAYBOOT_RAY_START_ARGS": f"--redis-password={password} --redis-username=ray"}


def test_plan_redacts_the_redis_password_and_ray_gets_it(run, gcs, tmp_path):
    password, url_password = secrets.token_hex(8), secrets.token_hex(8)
    log = tmp_path / "ray.log"
    wait_for_ray = f"import os, time\nwhile not os.path.exists({str(log)!r}): time.sleep(0.02)\n"
    command = ["--", PY, "-c", wait_for_ray, f"--data=https://user:{url_password}@store.example/bucket"]
    env = ft_head_env(gcs, password)

    shown = run(env, ["plan", "--format=json", *command])
    assert shown.wait(10) == 0, shown.stderr
    plan = json.loads(shown.stdout)
    assert "--redis-password=<redacted>" in plan["ray_start"], plan["ray_start"]
    assert "--redis-username=ray" in plan["ray_start"], plan["ray_start"]
    assert plan["command"][-1] == "--data=https://user:<redacted>@store.example/bucket", plan["command"]
    text = run(env, ["plan", "--format=text", *command])
    assert text.wait(10) == 0, text.stderr
    assert "--redis-password=<redacted>" in text.stdout, text.stdout
    for out in (shown.stdout, text.stdout, shown.stderr, text.stderr):
        assert password not in out and url_password not in out, out

    head = run(env, ["--log-format=json", *command])
    assert head.wait(30) == 0, head.stderr
    argv = json.loads(log.read_text().splitlines()[0])["argv"]
    assert f"--redis-password={password}" in argv, argv  # what is exec'd is the real value
    assert password not in head.stderr and url_password not in head.stderr, head.stderr


def test_a_dash_value_of_a_secret_flag_is_refused_without_showing_it(run, gcs):
    """`--redis-password -x...` (a value that begins with '-', so not taken as the value) was
    refused with the value itself in the message; now the message names the flag."""
    password = "-" + secrets.token_hex(8)
    r = run({"RAYBOOT_ROLE": "head", "RAYBOOT_RAY_START_ARGS": f"--redis-password {password}"}, ["plan"])
    assert r.wait(10) == 2, r.stderr
    assert "the value after --redis-password begins with '-'" in r.stderr, r.stderr
    assert password not in r.stderr, r.stderr
