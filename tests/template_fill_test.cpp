// The typed template flags (repro/template_flags.h): a flag is a tag some template has, a line's
// tag keeps or drops it, and a tag or a run-time word that is no flag is an error, not a line
// silently dropped.

#include <gtest/gtest.h>

#include <stdexcept>

#include "repro/template_fill.h"

namespace tsrepro_test {
namespace {

using namespace tsrepro;

TEST(TemplateFill, PlaceholdersFlagsAndEmptyLines) {
  const std::string text =
      "a = __VALUE__\n"
      "__EMPTY__\n"
      "b = 1  #[packed]\n"
      "c = 2  #[!packed]\n"
      "d = 3  # a comment  #[module]\n"
      "def __init__(self): return __VALUE__  # __lower__ stays\n"
      "\n\n\n\n"
      "e = 4  //[packed]\n";
  EXPECT_EQ(fill_template(text, {{"VALUE", "__KEPT__ [x]"}, {"EMPTY", ""}}, {flag::packed}),
            "a = __KEPT__ [x]\nb = 1\ndef __init__(self): return __KEPT__ [x]  # __lower__ stays\n\n\ne = 4\n");
  EXPECT_THROW(fill_template("x = __MISSING__\n", {}), std::logic_error);
}

TEST(TemplateFlags, ATagOfTheTemplatesIsAFlagAndKeepsItsLine) {
  EXPECT_EQ(TemplateFlag::named("packed").name(), flag::packed.name());
  const std::string text = "always\nonly packed  #[packed]\nonly single  #[!packed]\n";
  EXPECT_EQ(fill_template(text, {}, {flag::packed}), "always\nonly packed\n");
  EXPECT_EQ(fill_template(text, {}, {}), "always\nonly single\n");
  TemplateFlags flags{flag::packed, flag::module};
  flags.erase(flag::packed);
  EXPECT_EQ(flags.count(flag::packed), 0u);
  EXPECT_EQ(flags.count(flag::module), 1u);
}

TEST(TemplateFlags, AWordThatIsNoTagIsAnError) {
  EXPECT_THROW(TemplateFlag::named("packd"), std::logic_error);
  // A template whose tag no generated flag has (a typo in the template, or a template the build
  // does not read for tags) fails when it is filled, instead of dropping its line.
  EXPECT_THROW(fill_template("x = 1  #[packd]\n", {}, {flag::packed}), std::logic_error);
  // Brackets that are no tag (a list, an index) are text.
  EXPECT_EQ(fill_template("x = y[0]\nz = [1, 2]\n", {}, {}), "x = y[0]\nz = [1, 2]\n");
}

}  // namespace
}  // namespace tsrepro_test
