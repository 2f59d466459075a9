"""Run converted functions sharded across 8 host devices; print one JSON report.

Run by tests/test_sharding.py (``python -m tests.sharding_script``) in a subprocess with
XLA_FLAGS=--xla_force_host_platform_device_count=8, so the rest of the suite keeps
one device. Each entry compares the sharded result with the one-device result.
"""

import json
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import autograph  # noqa: E402
from autograph import set_loop_options  # noqa: E402


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def newton_sqrt(a):
    x = a
    while jnp.max(jnp.abs(x * x - a)) > 1e-4:
        set_loop_options(maximum_iterations=40)
        x = 0.5 * (x + a / x)
    return x


def row_softmax_sum(x):
    total = jnp.zeros(x.shape[1:])
    for row in x:
        if jnp.max(row) > 0.5:
            total = total + jax.nn.softmax(row)
        else:
            total = total - row
    return total


def ranges(x, n):
    for i in range(4):
        x = jnp.sin(x) + i
    total = jnp.zeros_like(x)  # varying per device, like what the loop adds to it
    for i in range(n):
        total = total + x * i
    return total


def loss(w, xs):
    h = jnp.zeros(w.shape[0])
    for x in xs:
        h = jnp.tanh(w @ h + x)
    return jnp.sum(h * h)


def main():
    devices = jax.devices()
    # Auto axes: jit partitions the program from in/out shardings. (With jax 0.10's
    # default Explicit axes, vmap of any lax.while_loop under jit with a batch-sharded
    # input fails inside JAX, hand-written lax included; shard_map works in both.)
    mesh = jax.make_mesh((len(devices),), ("batch",), axis_types=(AxisType.Auto,))
    batch = NamedSharding(mesh, P("batch"))
    replicated = NamedSharding(mesh, P())
    report = {"devices": len(devices)}

    starts = jnp.arange(1, 1025)
    expected = jax.vmap(autograph.convert(collatz))(starts)
    sharded = jax.jit(jax.vmap(autograph.convert(collatz)), in_shardings=batch,
                      out_shardings=batch)
    out = sharded(jax.device_put(starts, batch))
    report["jit_shardings_collatz"] = bool(np.array_equal(out, expected))
    report["jit_shardings_out_devices"] = len(out.sharding.device_set)

    per_shard = jax.shard_map(jax.vmap(autograph.convert(collatz)), mesh=mesh,
                              in_specs=P("batch"), out_specs=P("batch"))
    report["shard_map_collatz"] = bool(np.array_equal(
        jax.jit(per_shard)(jax.device_put(starts, batch)), expected))

    # a loop whose trip count differs per shard (each device stops on its own)
    values = jnp.linspace(0.5, 400.0, 64)
    newton = autograph.convert(newton_sqrt)
    local_newton = jax.shard_map(newton, mesh=mesh, in_specs=P("batch"), out_specs=P("batch"))
    report["shard_map_newton"] = bool(np.allclose(
        jax.jit(local_newton)(jax.device_put(values, batch)), newton(values), rtol=1e-5))

    # a static range and a range with a per-example traced bound
    xs, ns = jnp.linspace(0.0, 1.0, 64), jnp.arange(64) % 7
    both = jax.vmap(autograph.convert(ranges))
    local = jax.shard_map(both, mesh=mesh, in_specs=(P("batch"), P("batch")),
                          out_specs=P("batch"))
    report["shard_map_ranges"] = bool(np.allclose(
        jax.jit(local)(jax.device_put(xs, batch), jax.device_put(ns, batch)), both(xs, ns),
        rtol=1e-5))

    # reverse mode through the bounded loop, each device differentiating its shard
    sharded_grad = jax.jit(jax.grad(lambda v: jnp.sum(local_newton(v))))
    report["shard_map_grad_bounded_while"] = bool(np.allclose(
        sharded_grad(jax.device_put(values, batch)), 0.5 / np.sqrt(values), rtol=1e-3))

    # scan over rows, a branch per row, then a cross-device sum
    x = jax.random.uniform(jax.random.key(0), (64, 16))

    def summed(block):
        return jax.lax.psum(autograph.convert(row_softmax_sum)(block), "batch")

    total = jax.shard_map(summed, mesh=mesh, in_specs=P("batch"), out_specs=P())
    report["shard_map_psum"] = bool(np.allclose(jax.jit(total)(jax.device_put(x, batch)),
                                                autograph.convert(row_softmax_sum)(x),
                                                rtol=1e-5, atol=1e-5))

    # reverse mode through a converted loop, data-parallel under sharded jit
    w = jax.random.normal(jax.random.key(1), (16, 16)) * 0.3
    xs = jax.random.normal(jax.random.key(2), (8, 64, 16))

    def batch_loss(w, xs):
        return jnp.mean(jax.vmap(lambda x: loss(w, x), in_axes=1)(xs))

    converted = autograph.convert(batch_loss)
    grad = jax.jit(jax.grad(converted), in_shardings=(replicated, NamedSharding(
        mesh, P(None, "batch"))), out_shardings=replicated)
    report["jit_shardings_grad"] = bool(np.allclose(
        grad(w, xs), jax.grad(converted)(w, xs), rtol=1e-4, atol=1e-6))

    # the same with JAX's default (Explicit) mesh axes, under shard_map
    explicit = jax.make_mesh((len(devices),), ("batch",))
    per_shard = jax.shard_map(jax.vmap(autograph.convert(collatz)), mesh=explicit,
                              in_specs=P("batch"), out_specs=P("batch"))
    out = jax.jit(per_shard)(jax.device_put(starts, NamedSharding(explicit, P("batch"))))
    report["shard_map_explicit_mesh"] = bool(np.array_equal(jax.device_get(out), expected))

    print(json.dumps(report))


if __name__ == "__main__":
    main()
