"""The API read from a real sdist with `ast`: names, signatures, docs, re-exports, deprecations."""

from __future__ import annotations

from pathlib import Path

import pytest
from apiref_fixtures import unpack_sdist, write_tree

from context_cli.apiref.docstring import render
from context_cli.apiref.python import extract_api


@pytest.fixture(scope="module")
def itsdangerous(tmp_path_factory: pytest.TempPathFactory):
    root = unpack_sdist("itsdangerous-2.2.0", tmp_path_factory.mktemp("sdist"))
    ref = extract_api(root, registry="pip", name="itsdangerous", version="2.2.0")
    return {s.name: s for s in ref.symbols}, ref


def test_entries_are_named_where_defined_with_their_reexports(itsdangerous) -> None:
    symbols, ref = itsdangerous
    signer = symbols["itsdangerous.signer.Signer"]
    assert signer.kind == "class" and signer.aliases == ("itsdangerous.Signer",)
    assert signer.source == "src/itsdangerous/signer.py" and signer.line > 1
    assert "Signer(secret_key: str | bytes" in signer.signature  # the constructor, `self` dropped
    sign = symbols["itsdangerous.signer.Signer.sign"]
    assert sign.kind == "method" and sign.signature == "Signer.sign(value: str | bytes) -> bytes"
    assert symbols["itsdangerous.signer.Signer.secret_key"].kind == "property"
    assert ref.notes == []


def test_private_modules_and_names_stay_out(itsdangerous) -> None:
    symbols, _ = itsdangerous
    assert not any("._json" in n or n.rsplit(".", 1)[-1].startswith("_") for n in symbols)
    assert "itsdangerous.encoding.want_bytes" in symbols  # public module, no __all__: its own names


def test_overloads_keep_every_signature(itsdangerous) -> None:
    unsign = itsdangerous[0]["itsdangerous.timed.TimestampSigner.unsign"]
    assert unsign.signature.count("TimestampSigner.unsign(") == 2  # the two overloads, not the implementation
    assert "Literal[True]" in unsign.signature and unsign.doc  # the docstring is the implementation's


def test_docstrings_become_markdown_with_versions(itsdangerous) -> None:
    bad_data = itsdangerous[0]["itsdangerous.exc.BadData"]
    assert bad_data.since == "0.15"
    loads_unsafe = itsdangerous[0]["itsdangerous.serializer.Serializer.loads_unsafe"]
    assert "*Added in version 0.15.*" in loads_unsafe.doc


def test_docstring_styles() -> None:
    rest = render(":param str salt: A salt.\n:returns: The bytes.\n\n.. deprecated:: 2.1\n    Use :func:`~a.dumps`.")
    assert "- `salt` (str): A salt." in rest.markdown and rest.deprecated == "Deprecated since version 2.1: Use `dumps`."
    google = render("Args:\n    x (int): the x.\n    y: the y\n        more.\n\nReturns:\n    str: text.")
    assert "- `x` (int): the x." in google.markdown and "- `y`: the y more." in google.markdown
    numpy = render("Parameters\n----------\na : int\n    The a.\n")
    assert "- `a` (int): The a." in numpy.markdown
    numpy = render("Parameters\n----------\na : int\n    The a.\n\nReturns\n-------\nint\n    The sum.\n\n"
                   "Examples\n--------\n>>> f(1)\n2\n")
    assert "- `a` (int): The a.\n\n**Returns:**\n\n- `int`: The sum." in numpy.markdown  # (not items of Parameters)
    assert "**Examples:**\n\n```pycon\n>>> f(1)\n2\n```" in numpy.markdown
    table = render("F.\n\nExamples\n--------\n>>> print(t)\nname\n----\nx\n")  # (doctest output's head: no title)
    assert table.markdown == "F.\n\n**Examples:**\n\n```pycon\n>>> print(t)\nname\n----\nx\n```"
    empty = render("Parameters\n----------\nReturns\n-------\nint\n    The x.\n")
    assert empty.markdown == "**Parameters:**\n\n**Returns:**\n\n- `int`: The x."
    titled = render("Intro.\n\nServer Side Cursors\n-------------------\n\nText.\n\n.. admonition:: Best\n\n    Do it.\n")
    assert titled.markdown == "Intro.\n\nServer Side Cursors\n-------------------\n\nText.\n\n**Best:** Do it."
    indented = render("Add.\n\nParameters\n----------\n    a : int\n        The first.\n\nNotes\n-----\n"
                      "    Not checked::\n\n        add(1, 2)\n")  # items indented under their titles
    assert indented.markdown == ("Add.\n\n**Parameters:**\n\n- `a` (int): The first.\n\n**Notes:**\n\n"
                                 "Not checked:\n\n```python\nadd(1, 2)\n```")
    code = render("Use it::\n\n    s.sign(x)\n\n>>> 1 + 1\n2")
    assert "```python\ns.sign(x)\n```" in code.markdown and "```pycon\n>>> 1 + 1\n2\n```" in code.markdown


def test_deprecations_all_and_stubs(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {
        "pkg/__init__.py": "from .core import run, old, Legacy\nfrom .core import *\n__all__ = ['run', 'old', 'Legacy']\n",
        "pkg/core.py": (
            "import warnings\nfrom typing_extensions import deprecated\n"
            "def run(x):\n    '''Run.'''\n"
            "def old(y):\n    '''Old.'''\n    warnings.warn('use run', DeprecationWarning, stacklevel=2)\n"
            "@deprecated('gone in 3')\nclass Legacy:\n    pass\n"
            "def helper(): pass\n"
        ),
        "pkg/core.pyi": "def run(x: int) -> str: ...\ndef old(y: int) -> None: ...\n"
                        "class Legacy: ...\ndef helper() -> None: ...\n",
        "pkg/tests/test_core.py": "def test_it(): pass\n",
        "pkg/_vendor/six.py": "def six(): pass\n",
        "setup.py": "print('never run')\n",
    })
    symbols = {s.name: s for s in extract_api(root, registry="pip", name="pkg", version="1").symbols}
    assert symbols["pkg.core.run"].signature == "run(x: int) -> str"  # the stub wins
    assert symbols["pkg.core.run"].aliases == ("pkg.run",)
    assert not any("tests" in n or "_vendor" in n or "setup" in n for n in symbols)
    root2 = write_tree(tmp_path / "src2", {
        "pkg/__init__.py": "from .core import run, old, Legacy\n__all__ = ['run', 'old', 'Legacy']\n",
        "pkg/core.py": (
            "import warnings\nfrom typing_extensions import deprecated\n"
            "def run(x, /, y=1, *, z: int = 2, **kw): pass\n"
            "def old(y):\n    '''Old.'''\n    warnings.warn(f'use run, not {y}', DeprecationWarning, stacklevel=2)\n"
            "@deprecated('gone in 3')\nclass Legacy:\n    pass\n"
        ),
    })
    symbols = {s.name: s for s in extract_api(root2, registry="pip", name="pkg", version="1").symbols}
    assert symbols["pkg.core.run"].signature == "run(x, /, y=1, *, z: int = 2, **kw)"
    assert symbols["pkg.core.old"].deprecated == "use run, not {...}"
    assert symbols["pkg.core.Legacy"].deprecated == "gone in 3"
    assert symbols["pkg.core.run"].deprecated is None


def test_lib_layout_is_found(tmp_path: Path) -> None:
    """SQLAlchemy's sdist keeps its package under lib/, beside doc/ and examples/."""
    root = write_tree(tmp_path, {"lib/pkg/__init__.py": "from .engine import create as create\n",
                            "lib/pkg/engine.py": "def create(url: str) -> None:\n    '''Make one.'''\n",
                            "examples/demo.py": "def demo(): pass\n"})
    symbols = {s.name: s for s in extract_api(root, registry="pip", name="pkg", version="1").symbols}
    assert symbols["pkg.engine.create"].aliases == ("pkg.create",) and symbols["pkg.engine.create"].source == \
        "lib/pkg/engine.py"
    assert not any("demo" in n for n in symbols)


def test_test_modules_inside_a_package_are_not_its_api(tmp_path: Path) -> None:
    """A wheel ships its tests beside the code (databend-sqlalchemy's `test.py`)."""
    body = 'def run() -> None:\n    """Run it."""\n'
    root = write_tree(tmp_path, {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/core.py": body,
                                 "pkg/test.py": body, "pkg/test_core.py": body, "pkg/core_test.py": body,
                                 "pkg/conftest.py": body, "pkg/testing_tools.py": body})
    names = {s.name for s in extract_api(root, registry="pip", name="pkg", version="1").symbols}
    assert {"pkg.core.run", "pkg.testing_tools.run"} <= names
    assert not names & {"pkg.test.run", "pkg.test_core.run", "pkg.core_test.run", "pkg.conftest.run"}


def test_class_attributes_are_annotated_documented_or_enum_members(tmp_path: Path) -> None:
    """A bare `x = value` in a class body is a setting (Django's backends have thousands), not
    API; an annotated one, one with a docstring after it, or an enum member is."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import enum\nclass Color(enum.Enum):\n    RED = 1\n\n"
        "class Feature:\n    vendor = 'x'\n    timeout: float = 2.0\n    retries = 3\n"
        '    """How often to try again."""\n\n'
        'LIMIT: int = 10\n"""The most there may be."""\n', "utf-8")
    symbols = {s.name: s for s in extract_api(tmp_path, registry="pip", name="pkg", version="1").symbols}
    assert "pkg.Color.RED" in symbols and "pkg.Feature.vendor" not in symbols
    assert symbols["pkg.Feature.timeout"].signature == "Feature.timeout: float = 2.0"
    assert symbols["pkg.Feature.retries"].doc == "How often to try again."
    assert symbols["pkg.LIMIT"].doc == "The most there may be."


def test_a_test_package_of_the_api_is_read_a_test_suite_is_not(tmp_path: Path) -> None:
    """`django.test` and `numpy.testing` are API (helpers for the user's tests, no test
    modules in them); `pkg/tests`, `pkg/sub/tests` (a Django app's `tests.py`) and
    `numpy/testing/tests` are test suites, as is a top-level `tests/` package and one whose
    tests sit folders deep (`pkg/deep/tests/unit/core/test_a.py`)."""
    body = 'def run() -> None:\n    """Run it."""\n'
    root = write_tree(tmp_path, {
        "pyproject.toml": "", "pkg/__init__.py": "",
        "pkg/test/__init__.py": "from .client import Client\n", "pkg/test/client.py": "class Client:\n    '''A client.'''\n",
        "pkg/testing/__init__.py": "", "pkg/testing/utils.py": body,
        "pkg/testing/tests/__init__.py": "", "pkg/testing/tests/test_utils.py": body,
        "pkg/tests/__init__.py": "", "pkg/tests/helpers.py": body, "pkg/tests/unit/test_core.py": body,
        "pkg/sub/__init__.py": "", "pkg/sub/tests/__init__.py": "", "pkg/sub/tests/tests.py": body,
        "pkg/sub/tests/models.py": body, "pkg/nopkg/testing/utils.py": body, "pkg/sub/testing/__init__.py": body,
        "tests/__init__.py": "", "tests/helpers.py": body,
        "pkg/deep/__init__.py": "", "pkg/deep/tests/__init__.py": "", "pkg/deep/tests/factories.py": body,
        "pkg/deep/tests/unit/core/helpers.py": body, "pkg/deep/tests/unit/core/test_a.py": body,
    })
    names = {s.name for s in extract_api(root, registry="pip", name="pkg", version="1").symbols}
    assert {"pkg.test.client.Client", "pkg.testing.utils.run"} <= names
    assert not {n for n in names if ".tests" in n or n.startswith("tests") or "sub.testing" in n}, names


def test_packages_the_framework_runs_are_not_read(tmp_path: Path) -> None:
    """Django's `conf/locale`, an app's `management/commands` and numbered `migrations` are
    run by the framework, not imported: left out with a note. `db/migrations` (the
    framework's own, imported) and a `locale` package elsewhere are API."""
    body = 'def run() -> None:\n    """Run it."""\n'
    root = write_tree(tmp_path, {
        "pyproject.toml": "", "pkg/__init__.py": "", "pkg/conf/__init__.py": "",
        "pkg/conf/locale/__init__.py": "LANG_INFO = {}\n", "pkg/conf/locale/de/__init__.py": "",
        "pkg/conf/locale/de/formats.py": "DATE_FORMAT = 'j. F Y'\n",
        "pkg/app/__init__.py": "", "pkg/app/management/__init__.py": "", "pkg/app/management/base.py": body,
        "pkg/app/management/commands/__init__.py": "", "pkg/app/management/commands/serve.py": body,
        "pkg/app/migrations/__init__.py": "", "pkg/app/migrations/0001_initial.py": body,
        "pkg/db/__init__.py": "", "pkg/db/migrations/__init__.py": "", "pkg/db/migrations/operations.py": body,
        "pkg/locale/__init__.py": body,
    })
    ref = extract_api(root, registry="pip", name="pkg", version="1")
    names = {s.name for s in ref.symbols}
    assert {"pkg.app.management.base.run", "pkg.db.migrations.operations.run", "pkg.locale.run"} <= names
    assert not {n for n in names if ".conf.locale" in n or ".commands" in n or "app.migrations" in n}, names
    assert ref.notes == ["API: 3 packages of translations, migrations or management commands not read "
                         "(pkg.app.management.commands, pkg.app.migrations, pkg.conf.locale)"]
