// The README's host-program snippets are the code the host program test
// builds: each fenced block that follows a `<!-- <path> -->` line must appear,
// verbatim, in that file of the repository, so the README cannot drift from
// code that compiles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Snippet {
  std::string path;  // Repository-relative.
  std::string code;  // The block's lines, each ending in '\n'.
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every block preceded by a `<!-- path -->` line.
std::vector<Snippet> MarkedSnippets(const std::string& readme) {
  std::vector<Snippet> snippets;
  std::istringstream lines(readme);
  std::string line, marked;
  while (std::getline(lines, line)) {
    if (line.rfind("<!-- ", 0) == 0 && line.size() > 9 && line.substr(line.size() - 4) == " -->") {
      marked = line.substr(5, line.size() - 9);
      continue;
    }
    if (!marked.empty() && line.rfind("```", 0) == 0) {
      Snippet snippet{marked, ""};
      while (std::getline(lines, line) && line.rfind("```", 0) != 0) snippet.code += line + "\n";
      snippets.push_back(snippet);
    }
    marked.clear();
  }
  return snippets;
}

TEST(ReadmeTest, EveryMarkedSnippetIsInTheFileItNames) {
  const std::vector<Snippet> snippets = MarkedSnippets(ReadFile(KEEL_SOURCE_DIR "/README.md"));
  for (const Snippet& snippet : snippets) {
    const std::string file = ReadFile(std::string(KEEL_SOURCE_DIR "/") + snippet.path);
    ASSERT_FALSE(file.empty()) << snippet.path << " is missing or empty";
    EXPECT_NE(file.find(snippet.code), std::string::npos)
        << "README's snippet is not verbatim in " << snippet.path << ":\n"
        << snippet.code;
  }
}

TEST(ReadmeTest, TheHostDriverSectionShowsTheDriverAndItsBuild) {
  std::vector<std::string> paths;
  for (const Snippet& snippet : MarkedSnippets(ReadFile(KEEL_SOURCE_DIR "/README.md"))) {
    paths.push_back(snippet.path);
  }
  EXPECT_THAT(paths, testing::IsSupersetOf({"tests/host/journal_driver.cc",
                                            "tests/host/keel_host_main.cc",
                                            "tests/host/journal_conformance_test.cc",
                                            "tests/host/CMakeLists.txt"}));
}

}  // namespace
