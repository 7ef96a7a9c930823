"""PyTorch's all_gather_into_tensor, reduce_scatter_tensor and all_reduce as a training step
calls them: a new output tensor every call from PyTorch's caching allocator (so the same
cudaMalloc blocks come back), and all_reduce in place on one tensor (as DDP's gradient
buckets), bf16. OPS (comma
list, default all three) and SIZES (bytes) choose what runs. Run under mpirun, on NCCL or on mccl preloaded:

    mpirun -np 2 python3 torch_collectives.py                       # NVIDIA's NCCL
    mpirun -np 2 -x LD_PRELOAD=libmccl.so.0 python3 torch_collectives.py

Rank 0 prints one CSV line per (op, bytes): op,bytes,time_us (median of rounds of `iters`
calls timed with CUDA events), busbw_GBps. Every output is checked against the value
computed here; a mismatch exits non-zero. A GPU-machine benchmark, not part of ctest.
"""
import os
import sys

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("RANK", "0")))
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("WORLD_SIZE", "1")))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29534")
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            device_id=torch.device("cuda", rank % torch.cuda.device_count()))
    dev = torch.device("cuda")
    iters, rounds = 20, 5
    sizes = [int(s) for s in os.environ.get("SIZES", str(1 << 20)).split(",")] if "SIZES" in os.environ else \
        [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30]
    if rank == 0:
        print("op,bytes,time_us,busbw_GBps")
    ops = os.environ.get("OPS", "allgather,reducescatter,allreduce").split(",")
    for op in ops:
        for total in sizes:  # bytes of the whole gathered tensor (nccl-tests' size)
            n = total // 2 // world  # bf16 elements a rank contributes
            mine = torch.full((n,), float(rank + 1), dtype=torch.bfloat16, device=dev)
            big = torch.full((n * world,), float(rank + 1), dtype=torch.bfloat16, device=dev)
            acc = torch.zeros(n * world, dtype=torch.bfloat16, device=dev)

            def call():
                if op == "allgather":
                    out = torch.empty(n * world, dtype=torch.bfloat16, device=dev)
                    dist.all_gather_into_tensor(out, mine)
                elif op == "allreduce":
                    out = acc  # zeros while timed: the sums stay finite
                    dist.all_reduce(out)
                else:
                    out = torch.empty(n, dtype=torch.bfloat16, device=dev)
                    dist.reduce_scatter_tensor(out, big)
                return out

            for _ in range(3):
                out = call()
            times = []
            for _ in range(rounds):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iters):
                    out = call()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) * 1000.0 / iters)
            if op == "allreduce":  # the checked call: known values
                acc.fill_(float(rank + 1))
                out = call()
            if op == "allgather":
                want = torch.arange(1, world + 1, dtype=torch.float32, device=dev).repeat_interleave(n)
            elif op == "allreduce":
                want = torch.full((n * world,), float(world * (world + 1) // 2), dtype=torch.float32, device=dev)
            else:
                want = torch.full((n,), float(world * (world + 1) // 2), dtype=torch.float32, device=dev)
            if not torch.equal(out.float(), want):
                print("rank %d: %s of %d bytes: wrong result" % (rank, op, total), flush=True)
                sys.exit(1)
            t = sorted(times)[len(times) // 2]
            if rank == 0:
                factor = 2.0 if op == "allreduce" else 1.0  # nccl-tests' bus bandwidth
                print("%s,%d,%.1f,%.1f" % (op, total, t, factor * total * (world - 1) / world / t / 1e3), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
