"""PyTorch's NCCL backend on mccl, unchanged: run under mpirun with libmccl preloaded.

    LD_PRELOAD=libmccl.so.0 mpirun -np 2 -x LD_PRELOAD python3 torch_preload_check.py

Every collective PyTorch maps to NCCL (all_reduce in several dtypes, all_to_all_single,
all_gather_into_tensor, reduce_scatter_tensor, broadcast, reduce, send/recv, a new group,
a CUDA graph capture) is checked against the value computed here; prints one line per
rank and exits non-zero on the first mismatch. A GPU-machine check, not part of ctest.
"""
import os
import sys

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", "0")))
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank % torch.cuda.device_count()))
    dev = torch.device("cuda")
    checks = []

    def check(name, got, want):
        ok = torch.equal(got.cpu(), want.cpu()) if got.dtype not in (torch.float16, torch.bfloat16) else \
            torch.allclose(got.float().cpu(), want.float().cpu(), rtol=1e-2, atol=1e-2)
        checks.append((name, ok))
        if not ok:
            print(f"rank {rank}: {name} WRONG: got {got.flatten()[:8].tolist()} want {want.flatten()[:8].tolist()}", flush=True)

    for dtype in (torch.float32, torch.bfloat16, torch.float16, torch.int32):
        for n in (1, 1000, 1 << 20):
            x = torch.full((n,), rank + 1, dtype=dtype, device=dev)
            dist.all_reduce(x)
            check(f"all_reduce {dtype} {n}", x, torch.full((n,), world * (world + 1) // 2, dtype=dtype))
    for n in (1, 4096, 1 << 18):
        inp = torch.arange(world * n, dtype=torch.float32, device=dev) + 1000 * rank
        out = torch.empty_like(inp)
        dist.all_to_all_single(out, inp)
        want = torch.cat([torch.arange(rank * n, (rank + 1) * n, dtype=torch.float32) + 1000 * r for r in range(world)])
        check(f"all_to_all_single {n}", out, want)
        ag = torch.empty(world * n, dtype=torch.float32, device=dev)
        dist.all_gather_into_tensor(ag, torch.full((n,), float(rank), device=dev))
        check(f"all_gather_into_tensor {n}", ag, torch.cat([torch.full((n,), float(r)) for r in range(world)]))
        rs = torch.empty(n, dtype=torch.float32, device=dev)
        dist.reduce_scatter_tensor(rs, torch.arange(world * n, dtype=torch.float32, device=dev))
        check(f"reduce_scatter_tensor {n}", rs, world * torch.arange(rank * n, (rank + 1) * n, dtype=torch.float32))
        b = torch.full((n,), float(rank), device=dev)
        dist.broadcast(b, src=world - 1)
        check(f"broadcast {n}", b, torch.full((n,), float(world - 1)))
        rd = torch.full((n,), 2.0, device=dev)
        dist.reduce(rd, dst=0)
        if rank == 0:
            check(f"reduce {n}", rd, torch.full((n,), 2.0 * world))
    if world > 1:
        t = torch.full((777,), float(rank), device=dev)
        if rank == 0:
            dist.send(t, dst=1)
        elif rank == 1:
            dist.recv(t, src=0)
            check("send/recv", t, torch.zeros(777))
    g = dist.new_group(list(range(world)))
    y = torch.ones(10, device=dev)
    dist.all_reduce(y, group=g)
    check("new_group all_reduce", y, torch.full((10,), float(world)))
    # A CUDA graph replaying an all_reduce.
    s = torch.cuda.Stream()
    z = torch.ones(1 << 16, device=dev)
    with torch.cuda.stream(s):
        dist.all_reduce(z)  # warm-up outside capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        z.fill_(1.0)
        with torch.cuda.graph(graph, stream=s):
            dist.all_reduce(z)
    for _ in range(3):
        z.fill_(1.0)
        graph.replay()
    torch.cuda.synchronize()
    check("graph all_reduce", z, torch.full((1 << 16,), float(world)))
    dist.barrier()
    dist.destroy_process_group()
    bad = [n for n, ok in checks if not ok]
    print(f"rank {rank}: {len(checks) - len(bad)}/{len(checks)} checks passed" + (f", failed: {bad}" if bad else ""), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
