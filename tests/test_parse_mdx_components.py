"""What component-heavy MDX pages carry outside Markdown: ESM title exports, tables in props."""

from __future__ import annotations

import time
from pathlib import Path

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
    text = body(mdx(API_TABLE + "\n<Note>\n  {\n    <p>Kept as text</p>\n  }\n</Note>\n"))
    assert "Browser default" not in text  # a live example: a picture, shown again as code
    assert "Kept as text" in text
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


FIXTURES = Path(__file__).parent / "fixtures" / "parse" / "mdx"


def fixture(name: str):
    return parse_file(name, (FIXTURES / name).read_bytes())


def section(doc, title: str) -> str:
    return next(b.text for b in doc.blocks if b.title == title)


def test_written_out_rows_of_a_code_built_table_are_kept_with_list_cells():
    intro = fixture("utility-page.mdx").blocks[0].text
    assert intro.splitlines() == [
        "- corner | corner-shape",
        "- corner-t | corner-top-left-shape, corner-top-right-shape",
    ]


def test_jsx_fragments_and_spacing_leave_only_text():
    text = section(fixture("utility-page.mdx"), "Basic example")
    assert "Traditionally each corner needs its own rule" in text.splitlines()
    assert "Hold Shift to preview." in text
    assert not any(mark in text for mark in ("{", "}", "<>", "</>"))


def test_inline_code_keeps_jsx_spacing_literally():
    assert 'Write `{" "}` between tags.' in body(mdx('Write `{" "}` between tags.\n'))


def test_a_prop_only_component_adds_no_text_nor_its_configuration_lists():
    doc = fixture("utility-page.mdx")
    assert section(doc, "Responsive design") == ""
    assert section(doc, "Customizing your theme") == ""
    assert "npm" not in section(fixture("api-fields.mdx"), "Props").split("\n\n")[0]


def test_tab_panels_are_named_by_their_trigger_and_triggers_do_not_repeat():
    text = section(fixture("shadcn-mcp.mdx"), "Quick Start")
    lines = text.splitlines()
    assert lines.count("Claude Code") == 1 and lines.count("Cursor") == 1
    assert lines[2:5] == ["VS Code", "Codex", "OpenCode"]  # triggers without a panel (in this excerpt) stay
    claude, cursor = lines.index("Claude Code"), lines.index("Cursor")
    assert claude < lines.index("npx shadcn@latest mcp init --client claude") < cursor
    assert cursor < lines.index("npx shadcn@latest mcp init --client cursor")


def test_a_tab_without_trigger_is_named_by_its_value():
    lines = section(fixture("api-fields.mdx"), "Props").splitlines()
    assert lines[lines.index("pnpm") + 2] == "```bash"


def test_param_and_response_fields_keep_the_name_they_document():
    intro = fixture("api-fields.mdx").blocks[0].text.split("\n\n")
    assert intro[intro.index("userId (string, required)") + 1] == "The id of the user to fetch."
    assert intro[intro.index("expand (string[], default: none)") + 1] == "Related objects to include."
    assert intro[intro.index("notify (boolean, required, default: false)") + 1] == "Send a notification when done."
    assert intro[intro.index("email (string)") + 1] == "The user's primary email address."


def test_an_html_element_in_a_live_demo_is_not_a_field():
    assert body(mdx('<Example>\n<select name="country">\n<option>France</option>\n</select>\n</Example>\n')) == "France"


def test_object_rows_and_exported_arrays_become_rows():
    doc = fixture("api-fields.mdx")
    assert doc.blocks[0].text.startswith(
        "- 404 | No user has this id.\n- 429 | Too many requests; retry after the `Retry-After` header."
    )
    props = section(doc, "Props")
    assert "- asChild | boolean | false | Render as the child element." in props
    assert '- side | "top" | "bottom" | "top"' in props  # the JSX description is code: left out


def test_a_live_example_rendered_from_jsx_is_left_out_and_its_code_kept():
    text = section(fixture("utility-page.mdx"), "Basic example")
    assert "Marta" not in text and "example.com" not in text
    assert '<li class="corner-t-round ...">...</li>' in text


def test_an_html_table_in_mdx_stays_a_table():
    text = section(fixture("utility-page.mdx"), "Using logical properties")
    assert text.splitlines()[-3:] == ["| Class | Left-to-right |", "| --- | --- |", "| `corner-s-*` | `corner-l-*` |"]


def test_a_heading_written_as_html_over_several_lines_is_a_heading():
    doc = mdx('<PageHeader>\n  <h1 className="text-3xl">\n    Theme <code>tokens</code>\n  </h1>\n</PageHeader>\n\n'
              '<h2 id="radius">\n  Radius\n</h2>\n\nCorners.\n')
    assert doc.title == "Theme tokens"
    assert [(b.level, b.title, b.text) for b in doc.blocks] == [(2, "Radius", "Corners.")]


def test_many_unclosed_tables_and_examples_parse_in_bounded_time():
    text = "<Example>\n" + "{\n<table>\n" * 20000 + "</Example>\n\n## After\n\nText.\n"
    start = time.perf_counter()
    doc = mdx(text)
    assert time.perf_counter() - start < 10
    assert doc.blocks[-1].title == "After"


def test_docusaurus_tab_values_name_their_panels_and_are_not_rows():
    text = body(mdx("<Tabs defaultValue=\"yarn\" values={[\n  {label: 'npm', value: 'npm'},\n  {label: 'Yarn', value: 'yarn'},\n]}>\n"
                    "<TabItem value=\"yarn\">\n\n```bash\nyarn add x\n```\n\n</TabItem>\n</Tabs>\n"))
    assert text == "Yarn\n\n```bash\nyarn add x\n```"


def test_an_example_brace_that_never_closes_takes_nothing_after_its_example():
    text = body(mdx("<Example>\n  {\n    <p>Demo</p>\n</Example>\n\nReal text.\n\n<Example>\n  {\n    <p>Two</p>\n  }\n</Example>\n"))
    assert "Real text." in text and "Two" not in text
