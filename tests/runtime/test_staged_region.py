"""``runtime/staged_region.py`` (the steps every staged region shares) and
``state.Holes``, and the one ``cond`` a staged ``if`` binds."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import autograph
from autograph.errors import ConversionError
from autograph.runtime import Undefined, UndefinedReturn
from autograph.runtime.stageable import StagingObstacles
from autograph.runtime.staged_region import StagedRegion
from autograph.runtime.state import HoleProbe, Holes
from autograph.runtime.tracing import Location


def test_holes_leave_unbound_variables_out_and_unbind_them_again():
    y, r = Undefined("y"), UndefinedReturn("retval")
    holes = Holes((1, y, r, 4))
    assert holes.operands == (1, 4) and holes.positions == {1: y, 2: r}
    assert holes.rebuild((10, 40)) == (10, y, r, 40)
    assert holes.bound_names(("a", "y", "retval", "d")) == ["a", "d"]
    out = holes.unbound_again((1, None, None, 5), {1, 2, 3}, ("a", "y", "retval", "d"))
    # A marker from before the region comes back as it was; a variable the region
    # unbound (del) is Undefined under its own name.
    assert out[1] is y and out[2] is r and isinstance(out[3], Undefined)
    assert out[3].name == "d" and out[0] == 1


def test_the_region_checks_at_the_users_line():
    where = Location("user.py", 7)
    region = StagedRegion("if", where, ("s",), StagingObstacles(), (), ())
    region.check((jnp.int32(1),))
    with pytest.raises(ConversionError, match="'s' holds a str") as info:
        region.check(("text",))
    assert "user.py:7" in str(info.value)
    with pytest.raises(ConversionError, match="first assigned inside the staged while loop"):
        StagedRegion("while loop", where, ("s",), StagingObstacles(), (), ()).check(
            (Undefined("s"),), defined=True)


def test_a_failed_probe_keeps_its_error():
    def iteration(state, item):
        raise TypeError("needs a Python value")

    probe = HoleProbe.run(iteration, (Undefined("t"),), jax.ShapeDtypeStruct((), jnp.int32))
    assert isinstance(probe.error, TypeError) and probe.shapes is None


def promoting_if(x):
    if x > 0:
        y = 1
    else:
        y = 2.5
    return y


def test_an_if_whose_branches_give_1_and_2_5_binds_one_cond():
    jaxpr = jax.make_jaxpr(autograph.convert(promoting_if))(jnp.int32(3))
    assert str(jaxpr).count(" cond[") == 1   # (inside the custom_jvp of batched_select)
    assert float(autograph.to_graph(promoting_if)(jnp.int32(3))) == promoting_if(3)
    assert float(autograph.to_graph(promoting_if)(jnp.int32(-3))) == promoting_if(-3)
    assert jax.jit(autograph.convert(promoting_if))(jnp.int32(-3)).dtype == jnp.float32


def test_a_probes_change_to_watched_state_is_settled_before_the_trace():
    """A probe that set an attribute of an object a watched list holds leaves its
    tracers there: ``unchanged_by_probes`` raises ``ProbeChanged`` (an ``Unrolls``
    signal), and ``settle`` puts the object back and gives the reason to unroll."""
    from autograph.runtime.staged_region import ProbeChanged
    from autograph.runtime.unrolling import Unrolls

    class Box:
        def __init__(self):
            self.x = 0.0

    boxes = [Box()]

    def body():
        return boxes

    region = StagedRegion("for loop", Location("user.py", 3), ("n",), StagingObstacles(),
                          (body,), (0,))
    region.unchanged_by_probes()   # nothing changed: no signal
    boxes[0].x = jnp.float32(1.0)
    with pytest.raises(ProbeChanged, match=r"Box object 'boxes\[0\]'") as info:
        region.unchanged_by_probes()
    assert isinstance(info.value, Unrolls)
    assert "Box object 'boxes[0]'" in region.settle(True, lambda: None)
    assert boxes[0].x == 0.0
