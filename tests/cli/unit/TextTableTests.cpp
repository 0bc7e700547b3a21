// The text tables' width budget (reports/TextTable.h): what is left out,
// what is shortened, what never is.
#include <doctest/doctest.h>

#include "../CliTestSupport.h"
#include "bundlefit/reports/TextTable.h"

using namespace bundlefit;
using bundlefit::test::longestLine;

namespace {

/// Sets the width for one test and puts the default back.
struct Width {
  explicit Width(size_t columns) { setTextWidth(columns); }
  ~Width() { setTextWidth(100); }
};

TextTable sample() {
  TextTable table({"name", "bytes", "where"}, {false, true, false});
  table.addRow({"a_rather_long_tensor_name_from_a_converted_model", "1,724,608",
                "external SDRAM, weights read in place"});
  table.addRow({"b", "12", "DTCM"});
  return table;
}

} // namespace

TEST_CASE("a table within the width is printed whole") {
  Width width(200);
  std::string text = sample().render();
  CHECK(text.find("a_rather_long_tensor_name_from_a_converted_model") != std::string::npos);
  CHECK(text.find("--wide") == std::string::npos);
}

TEST_CASE("too wide: the drop-order columns go first, and the table says so") {
  Width width(70);
  TextTable table = sample();
  table.setDropOrder({2});
  std::string text = table.render();
  CHECK(longestLine(text) <= 70);
  CHECK(text.substr(0, text.find('\n')).find("where") == std::string::npos);
  CHECK(text.find("DTCM") == std::string::npos);
  CHECK(text.find("a_rather_long_tensor_name_from_a_converted_model") != std::string::npos);
  CHECK(text.find("(left out to fit 70 columns: where; --wide shows them)\n") != std::string::npos);
}

TEST_CASE("still too wide: long text cells keep both ends, numbers are never cut") {
  Width width(50);
  std::string text = sample().render();
  CHECK(longestLine(text) <= 50);
  CHECK(text.find("1,724,608") != std::string::npos);
  CHECK(text.find("...") != std::string::npos);
  CHECK(text.find("a_rather") != std::string::npos);
  CHECK(elide("a_very_long_node_name", 15) == "a_very...e_name");
  CHECK(elide("short", 15) == "short");
}

TEST_CASE("width 0 (--wide, -v): nothing is dropped, shortened or wrapped") {
  Width width(0);
  TextTable table = sample();
  table.setDropOrder({2});
  CHECK(table.render().find("external SDRAM, weights read in place") != std::string::npos);
  std::string line(150, 'x');
  CHECK(wrapLongLines(line + "\n") == line + "\n");
}

TEST_CASE("long prose lines wrap at a space, continued 4 columns further in") {
  Width width(30);
  std::string wrapped =
      wrapLongLines("note: the quick brown fox jumps over the lazy dog twice\nok\n");
  CHECK(wrapped == "note: the quick brown fox\n    jumps over the lazy dog\n    twice\nok\n");
  // No space to break at: cut at the width, nothing lost.
  std::string word(45, 'w');
  std::string cut = wrapLongLines(word);
  CHECK(longestLine(cut) <= 30);
  std::string joined;
  for (char c : cut)
    if (c == 'w')
      joined += c;
  CHECK(joined == word);
}
