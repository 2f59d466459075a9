"""JAX's functions that take the user's functions.

Called from converted code, their function arguments are converted first:
``jax.grad(loss)`` differentiates the converted ``loss``, whose loops are staged
rather than unrolled. The converters route these calls through ``converted_call``;
the runtime converts the arguments.
"""

HIGHER_ORDER_FUNCTIONS = {
    "jax": ("grad", "value_and_grad", "vmap", "jit", "checkpoint", "remat", "jacrev",
            "jacfwd", "hessian", "jvp", "vjp", "linearize", "pmap", "custom_jvp",
            "custom_vjp", "shard_map"),
    "jax.lax": ("scan", "fori_loop", "while_loop", "cond", "switch", "map",
                "associative_scan", "custom_root", "custom_linear_solve"),
}

HIGHER_ORDER_NAMES = frozenset(name for names in HIGHER_ORDER_FUNCTIONS.values()
                               for name in names)
