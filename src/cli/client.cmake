# The CLI client verbs of `ax serve` (SPEC 5.4), linked into the `ax` binary.
# Included from src/cli/CMakeLists.txt (needs the ax_http_client, ax_url and
# ax_token_file targets of src/server).
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
add_library(ax_cli_client STATIC ${CMAKE_CURRENT_LIST_DIR}/client.cc)
target_include_directories(ax_cli_client PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(ax_cli_client PUBLIC CLI11::CLI11 PRIVATE ax_http_client ax_url ax_token_file
                                    nlohmann_json::nlohmann_json ax_warnings)
