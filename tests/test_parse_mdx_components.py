"""What component-heavy MDX pages carry outside Markdown: ESM title exports, tables in props."""

from __future__ import annotations

import time

from context_cli.parse import parse_file


def mdx(text: str, path: str = "docs/accent-color.mdx"):
    return parse_file(path, text.encode())


def body(doc) -> str:
    return "\n\n".join(b.text for b in doc.blocks)


API_TABLE = '''import { ApiTable } from "@/components/api-table.tsx";
import colors from "./utils/colors";

export const title = "accent-color";
export const description = "Utilities for controlling the accented color of a form control.";

<ApiTable
  rows={[
    ["accent-inherit", "accent-color: inherit;"],
    ["accent-current", "accent-color: currentColor;"],
    ...Object.entries(colors).map(([name, value]) => [
      `accent-${name}`,
      `accent-color: var(--color-${name}); /* ${value} */`,
    ]),
    ["accent-[<value>]", "accent-color: <value>;"],
  ]}
/>

## Examples

<Example>
  {
    <div className="flex">Browser default</div>
  }
</Example>
'''


def test_esm_exports_give_title_and_description():
    doc = mdx(API_TABLE)
    assert doc.title == "accent-color"
    assert doc.description == "Utilities for controlling the accented color of a form control."
    assert "export" not in body(doc)


def test_front_matter_keeps_its_own_title_over_an_export():
    doc = mdx('---\ntitle: From YAML\n---\n\nexport const title = "From ESM";\nexport const description = "d"\n\nText.\n')
    assert doc.title == "From YAML"
    assert doc.description == "d"


def test_nextjs_metadata_object():
    doc = mdx('export const metadata = {\n  title: "Routing",\n  description: \'How routes work.\',\n}\n\nText.\n')
    assert (doc.title, doc.description) == ("Routing", "How routes work.")


def test_string_rows_in_props_become_rows_and_code_built_rows_are_left_out():
    text = body(mdx(API_TABLE))
    assert "accent-inherit | accent-color: inherit;" in text
    assert "accent-[<value>] | accent-color: <value>;" in text
    assert "${" not in text and "Object.entries" not in text


def test_expression_braces_around_jsx_do_not_leak():
    text = body(mdx(API_TABLE))
    assert "Browser default" in text
    assert not {"{", "}"} & {line.strip() for line in text.splitlines()}


def test_self_closing_component_description_is_kept():
    doc = mdx('## Button\n\n<ComponentPreview name="button-demo" description="A button with an icon" />\n')
    assert "A button with an icon" in body(doc)


def test_long_prop_tables_parse_in_bounded_time():
    rows = "\n".join(f'    ["p-{i}", "padding: {i}px;"],' for i in range(280))
    start = time.perf_counter()
    doc = mdx(f"<ApiTable\n  rows={{[\n{rows}\n  ]}}\n/>\n\n## After\n\nText.\n")
    assert time.perf_counter() - start < 5
    assert "p-279 | padding: 279px;" in body(doc)
