#!/usr/bin/env python3
"""Blocks (SMs) per collective and size, mccl next to NCCL, from what each prints at
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING (rank 0, one line per planned collective):

  NCCL: "AllReduce: 8388608 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..15}"
  mccl: "AllReduce: 8388608 Bytes -> Algo ring proto SIMPLE channels 16 threads 512"
        "AllGather: 1048576 Bytes -> Algo copy-engines channels 0 (no SM moves data)"

usage: channels_table.py MCCL_LOG NCCL_LOG   (markdown on stdout)
"""
import re
import sys

LINE = re.compile(r"(AllReduce|Broadcast|Reduce|AllGather|ReduceScatter|Send|Recv): (\d+) Bytes -> Algo (\S+)"
                  r"(?: proto (\S+))?(?: channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}| channels (\d+))")


def read(path):
    seen = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            op, nbytes, algo, proto, lo, hi, nch = m.groups()
            ch = int(hi) - int(lo) + 1 if lo is not None else int(nch)
            how = algo if proto is None else f"{algo}/{proto}"
            seen[(op, int(nbytes))] = (how, ch)  # the last call of a size
    return seen


def main():
    mccl, nccl = read(sys.argv[1]), read(sys.argv[2])
    print("| op | bytes | mccl | mccl channels | NCCL | NCCL channels |")
    print("|---|---:|---|---:|---|---:|")
    for key in sorted(set(mccl) | set(nccl)):
        m, n = mccl.get(key, ("-", "")), nccl.get(key, ("-", ""))
        print(f"| {key[0]} | {key[1]} | {m[0]} | {m[1]} | {n[0]} | {n[1]} |")


if __name__ == "__main__":
    main()
