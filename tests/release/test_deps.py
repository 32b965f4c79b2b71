"""deps/build.sh's guard on its mbedTLS patch: the patch mends Mbed-TLS/mbedtls#10668, which
upstream fixed (#10672, backport #10674); a pinned source that already has the fix must stop the
build with a message, read from the source (its ChangeLog), not from a version number."""
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
BUILD_SH = REPO / "deps" / "build.sh"
FIX_ENTRY = ("Bugfix\n   * Fix a TLS 1.2 regression that caused clients to reject valid\n"
             "     ServerKeyExchange signatures using RSA-PSS signature algorithms.\n     Fixes #10668.\n")


def has_upstream_fix(tree):
    """deps/build.sh's own mbedtls_has_upstream_fix, run on TREE (0: the fix is there)."""
    text = BUILD_SH.read_text()
    start = text.index("mbedtls_has_upstream_fix() {")
    body = text[start:text.index("\n}\n", start) + 3]
    return subprocess.run(["bash", "-c", f'{body}\nmbedtls_has_upstream_fix "$1"', "guard", str(tree)]).returncode


def test_a_source_with_the_fix_is_found(tmp_path):
    unreleased, released, pinned = tmp_path / "dev", tmp_path / "rel", tmp_path / "pinned"
    (unreleased / "ChangeLog.d").mkdir(parents=True)
    (unreleased / "ChangeLog").write_text("= Mbed TLS 3.6.6 branch released\n")
    (unreleased / "ChangeLog.d" / "fix-tls12-rsa-pss-sigalgs.txt").write_text(FIX_ENTRY)
    released.mkdir()
    (released / "ChangeLog").write_text("= Mbed TLS 3.6.7 branch released\n\n" + FIX_ENTRY)
    (pinned / "ChangeLog.d").mkdir(parents=True)
    (pinned / "ChangeLog").write_text("= Mbed TLS 3.6.6 branch released\n")
    assert has_upstream_fix(unreleased) == 0
    assert has_upstream_fix(released) == 0
    assert has_upstream_fix(pinned) != 0


def test_the_build_stops_on_it_before_patching():
    """The guard runs in mbedtls_configure (which both mbedTLS builds, build_mbedtls and
    build_mbedtls_unit, call first) before the patch, and fails the step with a message."""
    text = BUILD_SH.read_text()
    step = text[text.index("mbedtls_configure() {"):]
    assert text.index("build_mbedtls() {") > text.index("mbedtls_configure() {")
    for build in ("build_mbedtls() {", "build_mbedtls_unit() {"):
        body = text[text.index(build):]
        assert body.index("mbedtls_configure") < body.index("cmake"), build
    guard, patch = step.index('if mbedtls_has_upstream_fix "$dir"; then'), step.index('patch -d "$dir" -p1')
    assert guard < patch
    assert "return 1" in step[guard:patch] and "Mbed-TLS/mbedtls#10668" in step[guard:patch]
