"""`rayboot install DIR` (the stock-image initContainer's job): both binaries land in DIR,
executable and identical, atomically (no temporary file left); a missing, non-directory or
read-only DIR exits 73 naming it."""
import os
import subprocess


def install(rayboot_bin, *args):
    return subprocess.run([str(rayboot_bin), "install", *args], env={}, capture_output=True, text=True, timeout=10)


def test_install_copies_both_binaries(rayboot_bin, sidecar_bin, tmp_path):
    (tmp_path / "rayboot").write_text("an older copy")
    r = install(rayboot_bin, str(tmp_path))
    assert r.returncode == 0, r.stderr
    for name, src in (("rayboot", rayboot_bin), ("rayboot-sidecar", sidecar_bin)):
        dst = tmp_path / name
        assert dst.read_bytes() == src.read_bytes()
        assert os.stat(dst).st_mode & 0o777 == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rayboot", "rayboot-sidecar"]
    # The installed copy works.
    assert subprocess.run([str(tmp_path / "rayboot"), "--version"], capture_output=True, timeout=5).returncode == 0


def test_bad_directories_exit_73_naming_them(rayboot_bin, tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("")
    for target, needle in ((tmp_path / "missing", "No such file or directory"), (a_file, "not a directory")):
        r = install(rayboot_bin, str(target))
        assert r.returncode == 73 and str(target) in r.stderr and needle in r.stderr, r.stderr


def test_read_only_directory_exits_73(rayboot_bin, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    # A read-only bind mount: root ignores permission bits, not a read-only mount. The script is a
    # constant; the paths reach it as arguments, never spliced into it.
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" install "$1"',
                        "sh", str(ro), str(rayboot_bin)], capture_output=True, text=True, timeout=10)
    assert r.returncode == 73, r.stderr
    assert str(ro) in r.stderr and "Read-only file system" in r.stderr
    assert list(ro.iterdir()) == []


def test_install_without_dir_exits_2(rayboot_bin):
    r = install(rayboot_bin)
    assert r.returncode == 2 and "install DIR" in r.stderr
