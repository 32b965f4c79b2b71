"""`make demo`: the seed cluster (Volcano Job ray-cluster: head x1, worker x2, plugins svc + env)
in simulated pods, rayboot the entrypoint of every pod. The head runs a small program that prints
the cluster's resources and squares 0..9 remotely; then every pod completes by itself."""
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import podsim  # noqa: E402
from rayjobs import ray_job  # noqa: E402

PROGRAM = """
import ray
ray.init()
print("cluster resources:", ray.cluster_resources(), flush=True)
@ray.remote
def square(x):
    return x * x
print("squares:", ray.get([square.remote(i) for i in range(10)]), flush=True)
"""


def main():
    venv = pathlib.Path(sys.prefix)
    binaries = {"rayboot": REPO / "build/bin/rayboot", "ray": venv / "bin/ray", "python": venv / "bin/python"}
    with tempfile.TemporaryDirectory(prefix="rayboot-demo-") as tmp:
        cluster = podsim.Cluster(pathlib.Path(tmp), venv, binaries)
        try:
            job = cluster.job(ray_job(head_command=["python", "-c", PROGRAM]))
            print("demo: starting ray-cluster (head x1, worker x2) in simulated pods", flush=True)
            job.start()
            code = job.pod("head").wait(300)
            for name, pod in job.pods.items():
                if name != "ray-cluster-head-0":
                    pod.wait(60)
            print("--- head pod log (rayboot's lines and the program's output)")
            print("\n".join(line for line in job.pod("head").log().splitlines()
                            if line.startswith(("rayboot:", "cluster resources:", "squares:"))))
            print("--- exit codes:", {name: pod.exit_code for name, pod in job.pods.items()})
            return code
        finally:
            cluster.close()


if __name__ == "__main__":
    sys.exit(main())
