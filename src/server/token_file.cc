// The bearer token's file.
#include "server/token_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace ax::server {

Result<std::string> ReadTokenFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("token-file: " + path + " is a directory");
  }
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("token-file: cannot read " + path);
  std::string text;
  try {  // libstdc++ throws on a read error, asked to or not
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure& e) {
    return Status::InvalidArgument("token-file: cannot read " + path + ": " + e.what());
  }
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  size_t b = text.find_first_not_of(kSpace);
  if (b == std::string::npos) return Status::InvalidArgument("token-file: " + path + " is empty");
  std::string token = text.substr(b, text.find_last_not_of(kSpace) - b + 1);
  for (char c : token) {
    if (c < '!' || c > '~') {
      return Status::InvalidArgument("token-file: " + path +
                                     " holds more than one token: a token is one word of "
                                     "visible ASCII characters");
    }
  }
  return token;
}

}  // namespace ax::server
