"""Every public package lists its whole API in ``__all__``, and every listed name imports.

``from amqp_jms import *`` and the API reference are built from ``__all__``; a name defined in a
package ``__init__`` but missing there is invisible to both, and a listed name that does not
resolve breaks the star import outright.
"""

from __future__ import annotations

import importlib
import types

import pytest

PACKAGES = ["amqp_jms", "amqp_jms.message", "amqp_jms.selector", "amqp_jms.mapping", "amqp_jms.mq"]


def _public_names(module: types.ModuleType) -> set[str]:
    """Names a user would reach as ``package.name``: not private, not submodules, not __future__."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"
    }


@pytest.mark.parametrize("package", PACKAGES)
def test_all_lists_every_public_name(package: str) -> None:
    module = importlib.import_module(package)
    exported = module.__all__
    assert len(exported) == len(set(exported)), f"{package}.__all__ has duplicates"
    missing = _public_names(module) - set(exported)
    assert not missing, f"{package} defines public names absent from __all__: {sorted(missing)}"


@pytest.mark.parametrize("package", PACKAGES)
def test_star_import_resolves_every_name(package: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {package} import *", namespace)  # the star import is what is under test
    assert set(importlib.import_module(package).__all__) <= set(namespace)


def test_subpackage_exports_reach_the_top_level() -> None:
    import amqp_jms
    import amqp_jms.message

    six = {"Message", "TextMessage", "BytesMessage", "MapMessage", "StreamMessage", "ObjectMessage"}
    assert six <= set(amqp_jms.__all__)
    for name in six:
        assert getattr(amqp_jms, name) is getattr(amqp_jms.message, name)
