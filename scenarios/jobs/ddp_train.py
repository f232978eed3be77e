#!/usr/bin/env python3
"""A small PyTorch DistributedDataParallel training job for fdrill's drills.

A two-layer MLP (WIDTH -> HIDDEN -> WIDTH, ReLU) learns a fixed random
linear map from seeded synthetic batches, over gloo (CPU tensors, TCP).
Every rank draws its batch from a generator seeded by (seed, step, rank),
so a run is a pure function of its arguments and world size: the digest of
the final parameters is the same in every fault-free run, and a run that
was killed and resumed from its checkpoint ends with the same digest when
its rollback was right.

Ranks come from the environment (env://): RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT, as torchrun sets them, or as `fdrill job-rank --framework
pytorch` maps them from mpirun's or srun's variables.

Each step prints one Megatron-LM style line (fdrill's `metrics: megatron`
preset reads it):
  iteration       12/     200 | consumed samples:  3072 | elapsed time per
  iteration (ms): 183.2 | learning rate: 1.000E-02 | global batch size:
  256 | lm loss: 1.234567E-01 |
(on one line). Rank 0 saves a checkpoint every --checkpoint-every steps
(torch.save to a temporary name, then os.replace: a kill mid-save leaves
the previous one) and every rank resumes from the latest at start. At the
end rank 0 prints `steps_done: N`, `digest: HEX` (SHA-256 of every
parameter's bytes, in order, first 16 hex digits) and `param_norm: X` (the
parameters' L2 norm, for a comparison within a tolerance).
"""
import argparse
import hashlib
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--checkpoint-every", type=int, default=0, help="0: no checkpoints")
    p.add_argument("--checkpoint-dir", default="", help="shared by every rank")
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--batch", type=int, default=64, help="per rank")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads per rank")
    args = p.parse_args()
    if args.checkpoint_every and not args.checkpoint_dir:
        p.error("--checkpoint-every needs --checkpoint-dir")
    return args


def checkpoint_path(directory):
    return os.path.join(directory, "latest.pt")


def save(directory, step, model, optimizer):
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, ".latest.pt.partial")
    torch.save({"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
               tmp)
    os.replace(tmp, checkpoint_path(directory))


def digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def param_norm(model):
    """The L2 norm of every parameter, in float64: the number a drill
    compares within a tolerance (expect.digest: {key: param_norm, ...})
    where the arithmetic is not bitwise deterministic."""
    return float(sum(p.detach().double().pow(2).sum() for p in model.parameters()) ** 0.5)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, args.hidden),
        torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.width),
    )
    target_map = torch.randn(args.width, args.width) / args.width**0.5
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)

    start = 0
    if args.checkpoint_every and os.path.exists(checkpoint_path(args.checkpoint_dir)):
        state = torch.load(checkpoint_path(args.checkpoint_dir))
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["step"]
        if rank == 0:
            print(f"resumed from {checkpoint_path(args.checkpoint_dir)} at step {start}",
                  flush=True)
    # find_unused_parameters=True keeps DDP's first bucket layout for the
    # whole run: by default DDP rebuilds its buckets after its first step
    # (torch/csrc/distributed/c10d/reducer.cpp, should_rebuild_buckets),
    # and the layout sets each gradient element's place in gloo's ring, so
    # its summation order: a process that resumed at step K would sum step
    # K in another order than one that had run since step 0, and its digest
    # would differ by rounding alone.
    ddp = DDP(model, find_unused_parameters=True)
    loss_fn = torch.nn.MSELoss()

    for step in range(start, args.steps):
        began = time.perf_counter()
        g = torch.Generator().manual_seed(args.seed * 1_000_003 + step * 1009 + rank)
        x = torch.randn(args.batch, args.width, generator=g)
        y = x @ target_map
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(x), y)
        loss.backward()  # DDP all-reduces the gradients here
        optimizer.step()
        done = step + 1
        if args.checkpoint_every and done % args.checkpoint_every == 0 and rank == 0:
            save(args.checkpoint_dir, done, model, optimizer)
        if args.checkpoint_every:
            dist.barrier()  # nobody runs past a checkpoint that is not yet on disk
        elapsed_ms = (time.perf_counter() - began) * 1000.0
        print(f" iteration {done:8d}/{args.steps:8d} |"
              f" consumed samples: {done * args.batch * world:12d} |"
              f" elapsed time per iteration (ms): {elapsed_ms:.1f} |"
              f" learning rate: {args.lr:.3E} |"
              f" global batch size: {args.batch * world:5d} |"
              f" lm loss: {loss.item():.6E} |", flush=True)

    if rank == 0:
        print(f"steps_done: {args.steps}", flush=True)
        print(f"digest: {digest(model)}", flush=True)
        print(f"param_norm: {param_norm(model):.17g}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
