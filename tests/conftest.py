import os

# Tests never reach the network: keep Hugging Face libraries offline.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

# The tests run Beam in this process and then start commands with subprocess. grpc (imported by
# Beam) re-creates its poller thread in the forked child when fork support is on, and with
# close_fds that thread can abort the child before exec ("epoll_wait error: Bad file
# descriptor", exit -6; a grpc bug fixed upstream in 2026). Nothing here forks without exec.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
