"""Staged print/assert with checkify, jax.export and JAX's ahead-of-time path."""

import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import autograph
from autograph.errors import ConversionError
from autograph.runtime import StagedAssertionError

SPEC = jax.ShapeDtypeStruct((), jnp.float32)


def safe_log(x, n):
    total = 0.0
    for i in range(n):
        assert x > i, f"x={x:.2f} must exceed {i}"
        total = total + jnp.log(x - i)
    return total


def model(x):
    print("x is", x)
    assert x > 0, "positive"
    return x * 2


def checked_square(x):
    assert x > 1, f"x={x}"
    return x * x


def line_of(fn, k):
    return f"{__file__}:{fn.__code__.co_firstlineno + k}"


# -- checkify -------------------------------------------------------------------------

def test_jit_of_checkify_returns_the_error_value():
    f = autograph.convert(safe_log)
    err, out = jax.jit(checkify.checkify(f), static_argnums=1)(jnp.float32(2.5), 4)
    text = err.get()
    assert text.startswith("x=2.50 must exceed 3 [") and line_of(safe_log, 3) in text
    with pytest.raises(checkify.JaxRuntimeError, match="x=2.50 must exceed 3"):
        err.throw()
    err, out = jax.jit(checkify.checkify(f), static_argnums=1)(jnp.float32(5.5), 4)
    assert err.get() is None
    np.testing.assert_allclose(out, safe_log(np.float32(5.5), 4), rtol=1e-6)


def test_checkify_around_jit_vmap_grad_and_to_graph():
    f = autograph.convert(safe_log)
    err, _ = checkify.checkify(jax.jit(f, static_argnums=1))(jnp.float32(2.5), 4)
    assert err.get().startswith("x=2.50 must exceed 3 [")
    err, _ = jax.vmap(checkify.checkify(f), in_axes=(0, None))(jnp.array([5.5, 2.5]), 4)
    assert err.get().startswith("at mapped index 1: x=2.50 must exceed 3 [")
    err, _ = checkify.checkify(autograph.to_graph(f, static_argnums=1))(jnp.float32(1.5), 3)
    assert err.get().startswith("x=1.50 must exceed 2 [")
    err, _ = checkify.checkify(jax.grad(autograph.convert(checked_square)))(jnp.float32(0.5))
    assert err.get().startswith("x=0.5 [")


def test_asserts_switch():
    err, _ = checkify.checkify(autograph.convert(checked_square, asserts="callback"))(
        jnp.float32(2.0))
    assert err.get() is None       # a host check: nothing in the error value
    with pytest.raises(ValueError, match="functionalized"):
        jax.jit(autograph.convert(checked_square, asserts="checkify"))(jnp.float32(2.0))
    dropped = jax.jit(autograph.convert(checked_square, asserts="drop"))
    assert float(dropped(jnp.float32(0.5))) == 0.25
    with pytest.raises(AssertionError):       # a Python assert is still Python's
        autograph.convert(checked_square, asserts="drop")(0.5)
    with autograph.staged_effects(asserts="checkify"):
        err, _ = jax.jit(checkify.checkify(autograph.convert(checked_square)))(
            jnp.float32(0.5))
    assert err.get().startswith("x=0.5 [")
    with pytest.raises(ValueError, match="asserts='never'"):
        autograph.convert(checked_square, asserts="never")


def test_prints_switch(capfd):
    out = jax.jit(autograph.convert(model, prints="drop"))(jnp.float32(3.0))
    jax.effects_barrier()
    assert float(out) == 6.0 and capfd.readouterr().out == ""
    autograph.convert(model, prints="drop")(3.0)      # Python values: Python's print
    assert capfd.readouterr().out == "x is 3.0\n"


# -- jax.export -----------------------------------------------------------------------

def test_export_names_the_print_and_assert_lines():
    with pytest.raises(ConversionError, match="jax.export cannot serialize") as info:
        jax.export.export(jax.jit(autograph.convert(model)))(SPEC)
    assert line_of(model, 1) in str(info.value) and "prints='drop'" in str(info.value)
    with pytest.raises(ConversionError, match="asserts='drop'") as info:
        jax.export.export(jax.jit(autograph.convert(model, prints="drop")))(SPEC)
    assert line_of(model, 2) in str(info.value)


def test_export_with_effects_dropped_or_checkified():
    exported = jax.export.export(jax.jit(autograph.convert(model, prints="drop",
                                                           asserts="drop")))(SPEC)
    restored = jax.export.deserialize(exported.serialize())
    assert float(restored.call(jnp.float32(-3.0))) == -6.0
    with autograph.staged_effects(prints="drop"):
        exported = jax.export.export(
            jax.jit(checkify.checkify(autograph.convert(model))))(SPEC)
    # (JAX serializes no checkify Error in an exported signature: called in process)
    err, out = exported.call(jnp.float32(-3.0))
    assert float(out) == -6.0 and err.get().startswith("positive [")
    err, out = exported.call(jnp.float32(3.0))
    assert err.get() is None and float(out) == 6.0


def test_python_dash_o_exports_without_asserts(tmp_path):
    module = tmp_path / "served.py"
    module.write_text(textwrap.dedent("""
        def double(x):
            assert x > 0, "positive"
            return x * 2
    """))
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import jax, jax.numpy as jnp, autograph, served
        spec = jax.ShapeDtypeStruct((), jnp.float32)
        exported = jax.export.export(jax.jit(autograph.convert(served.double)))(spec)
        print(float(exported.call(jnp.float32(-2.0))))
    """)
    run = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True,
                         text=True, timeout=300, env={"JAX_PLATFORMS": "cpu",
                                                     "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["-4.0"]


# -- ahead of time --------------------------------------------------------------------

def test_aot_compiled_raises_assertion_error_like_the_call():
    graph = autograph.to_graph(checked_square)
    compiled = graph.lower(jnp.float32(2.0)).compile()
    assert float(compiled(jnp.float32(2.0))) == 4.0
    with pytest.raises(AssertionError, match=r"^x=0.5 \[") as info:
        compiled(jnp.float32(0.5))
    assert isinstance(info.value, StagedAssertionError)
    assert line_of(checked_square, 1) in str(info.value)
    with pytest.raises(AssertionError, match=r"^x=0.25 \["):
        graph.trace(jnp.float32(2.0)).lower().compile()(jnp.float32(0.25))
    assert "stablehlo" in graph.lower(jnp.float32(2.0)).as_text() or "func" in (
        graph.lower(jnp.float32(2.0)).as_text())


def test_export_of_to_graph_goes_through_its_stages():
    graph = autograph.to_graph(autograph.convert(model, prints="drop", asserts="drop"))
    exported = jax.export.export(graph)(SPEC)
    assert float(exported.call(jnp.float32(2.0))) == 4.0
