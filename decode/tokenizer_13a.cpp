#include "decode/tokenizer_13a.h"

#include "io/utf8.h"

namespace heed::decode {
namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  size_t start = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, start)) {
    out.append(s, start, at - start);
    out.append(to);
    start = at + from.size();
  }
  out.append(s, start);
  s = std::move(out);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// mteval's class [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation (and the space) except the
// apostrophe, comma, hyphen and period, which the rules below treat by context.
bool is_split_punctuation(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// One left-to-right pass of a two-character regular expression substitution, as Python's
// re.sub: a match consumes both characters, so the next match starts after them. Working on
// UTF-8 bytes gives the same text as on code points: the patterns' literal characters are ASCII,
// and [^0-9] beside one of them can only be a character's first or last byte, kept as it is.
template <typename Match, typename Emit>
std::string substitute_pairs(const std::string& s, Match match, Emit emit) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && match(s[i], s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace

bool is_python_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

std::vector<std::string> split_python_whitespace(std::string_view text) {
  std::vector<std::string> words;
  std::u32string word;
  for (char32_t c : io::decode_utf8(text, "text to score")) {
    if (!is_python_whitespace(c)) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(io::encode_utf8(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(io::encode_utf8(word));
  return words;
}

std::string tokenize_13a(std::string_view line) {
  std::string s(line);
  replace_all(s, "<skipped>", "");
  replace_all(s, "-\n", "");
  replace_all(s, "\n", " ");
  replace_all(s, "&quot;", "\"");
  replace_all(s, "&amp;", "&");
  replace_all(s, "&lt;", "<");
  replace_all(s, "&gt;", ">");

  std::string spaced = " ";
  for (char c : s) {
    if (is_split_punctuation(c)) {
      spaced += ' ';
      spaced += c;
      spaced += ' ';
    } else {
      spaced += c;
    }
  }
  spaced += ' ';
  const auto period_or_comma = [](char c) { return c == '.' || c == ','; };
  // A period or comma not preceded by a digit: "\1 \2 ".
  spaced = substitute_pairs(
      spaced, [&](char a, char b) { return !is_digit(a) && period_or_comma(b); },
      [](std::string& out, char a, char b) {
        out += {a, ' ', b, ' '};
      });
  // A period or comma not followed by a digit: " \1 \2".
  spaced = substitute_pairs(
      spaced, [&](char a, char b) { return period_or_comma(a) && !is_digit(b); },
      [](std::string& out, char a, char b) {
        out += {' ', a, ' ', b};
      });
  // A dash after a digit: "\1 \2 ".
  spaced = substitute_pairs(
      spaced, [](char a, char b) { return is_digit(a) && b == '-'; },
      [](std::string& out, char a, char b) {
        out += {a, ' ', b, ' '};
      });

  std::string out;
  for (const std::string& word : split_python_whitespace(spaced)) {
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

}  // namespace heed::decode
