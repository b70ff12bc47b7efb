"""The IR's hash-consing: equal nodes are one object while one lives, and a dead node leaves no entry."""

from __future__ import annotations

import gc
import pickle

import numpy as np

from jupyter_fuse.ir import Node

F8 = np.dtype("f8")


def test_equal_nodes_are_one_object_and_others_are_not():
    a = Node.make("input", (), (0,), F8, (3,))
    b = Node.make("input", (), (1,), F8, (3,))
    s = Node.make("add", (a, b), (), F8, (3,))
    assert Node.make("add", [a, b], (), F8, (3,)) is s  # (args may come as a list)
    assert Node.make("add", (b, a), (), F8, (3,)) is not s
    assert Node.make("add", (a, b), (), np.dtype("f4"), (3,)) is not s
    assert pickle.loads(pickle.dumps(s)) is s


def test_a_dead_node_leaves_the_table_and_its_key_can_be_made_again():
    a = Node.make("input", (), (0,), F8, (4,))
    made = [Node.make("multiply", (a,), (("k", i),), F8, (4,)) for i in range(1000)]
    keys = [("multiply", (a,), (("k", i),), F8, (4,), None) for i in range(1000)]
    assert all(Node._table[k]() is n for k, n in zip(keys, made))
    serial = made[7].serial
    del made
    gc.collect()
    assert not any(k in Node._table for k in keys)  # (other tests' nodes may die meanwhile: only these are counted)
    again = Node.make("multiply", (a,), (("k", 7),), F8, (4,))
    assert again.serial > serial and Node.make("multiply", (a,), (("k", 7),), F8, (4,)) is again


def test_an_unhashable_parameter_makes_an_unshared_node():
    a = Node.make("input", (), (0,), F8, (2,))
    n1 = Node.make("full", (a,), ([1, 2],), F8, (2,))
    n2 = Node.make("full", (a,), ([1, 2],), F8, (2,))
    assert n1 is not n2 and n1.params == n2.params
