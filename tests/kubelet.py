"""The files the kubelet and Volcano's svc plugin put in a pod (shared/facts/volcano.md), written
once for both the pod simulator (tests/e2e) and the generated plan cases (tests/fixtures)."""
import os
import pathlib

CONFIGMAP_VERSION = "..2026_11_21_10_15_42.1893204651"


def hosts_file(ip: str, fqdn: str, hostname: str) -> str:
    return ("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            f"{ip}\t{fqdn}\t{hostname}\n")


def resolv_conf(namespace: str, nameserver: str, domain: str = "cluster.local") -> str:
    return f"search {namespace}.svc.{domain} svc.{domain} {domain}\nnameserver {nameserver}\noptions ndots:5\n"


def svc_configmap(hosts: dict) -> dict:
    """ConfigMap J-svc from {task: ["host.subdomain", ...]}: <t>.host, VC_<K>_HOSTS, VC_<K>_NUM."""
    data = {}
    for task, entries in hosts.items():
        k = task.replace("-", "_")
        data[f"{k}.host"] = "\n".join(entries)
        data[f"VC_{k.upper()}_HOSTS"] = ",".join(entries)
        data[f"VC_{k.upper()}_NUM"] = str(len(entries))
    return data


def svc_env(hosts: dict) -> dict:
    """The svc plugin's env vars for every task: VC_<K>_HOSTS and VC_<K>_NUM."""
    env = {}
    for task, entries in hosts.items():
        k = task.replace("-", "_").upper()
        env[f"VC_{k}_HOSTS"] = ",".join(entries)
        env[f"VC_{k}_NUM"] = str(len(entries))
    return env


def write_configmap(directory: pathlib.Path, data: dict, version: str = CONFIGMAP_VERSION):
    """The kubelet's atomic-writer layout: a versioned directory, `..data` pointing at it, and one
    symlink per key into `..data/`. A new version swaps `..data` with one rename."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / version).mkdir()
    for name, text in data.items():
        (directory / version / name).write_text(text)
    tmp = directory / "..data_tmp"
    tmp.symlink_to(version)
    os.rename(tmp, directory / "..data")
    for name in data:
        link = directory / name
        if not link.is_symlink():
            link.symlink_to(f"..data/{name}")
