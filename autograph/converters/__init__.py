"""One AST rewrite per construct. Each module ends in ``transform(node, ctx)``.

A converter only rewrites syntax into calls on the runtime (``ag__.if_stmt``,
``ag__.while_stmt``...); deciding between Python and JAX is the runtime's job.
"""
