"""relay_nb.util: small helpers shared across layers."""

from relay_nb.util import ByClass


class Base:
    pass


class Child(Base):
    pass


class GrandChild(Child):
    pass


class Other:
    pass


def test_by_class_answers_a_subclass_with_its_nearest_listed_base_and_keeps_it():
    asked = []
    table = ByClass({Base: "base", Child: "child"}, lambda cls: asked.append(cls) or cls.__name__.lower())
    assert table[Base] == "base"
    assert table[GrandChild] == "child"  # the nearest base, not the first listed
    assert table[Other] == "other"  # no listed base: the fallback's answer
    assert table[Other] == "other"
    assert asked == [Other]  # the fallback is asked once per class
    assert GrandChild in table and Other in table  # kept: later lookups are one dict lookup
