// JobStore contract (SPEC 4.3, 4.4, 4.7), run against MemoryStore and
// SqliteStore; SQLite specifics (group commit, reopen, lock) below.
#include "ax/store.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>
#include <thread>

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

namespace ax {
namespace {

DurableJob Job(std::string id, int64_t next_s, JobState st = JobState::kWaiting) {
  DurableJob j;
  j.id = std::move(id);
  j.handler = "h";
  j.payload = "p";
  j.state = st;
  j.next_run = FromUnixNanos(next_s * 1'000'000'000LL);
  j.created_at = j.updated_at = FromUnixNanos(1);
  return j;
}

std::string TempDb() {
  static std::atomic<int> n{0};
  auto dir = std::filesystem::temp_directory_path() /
             ("ax-store-test-" + std::to_string(getpid()) + "-" + std::to_string(n++));
  std::filesystem::remove_all(dir);
  return (dir / "ax.db").string();
}

class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      path_ = TempDb();
      store_ = SqliteStore::Open({.path = path_}).value();
    } else {
      store_ = std::make_unique<MemoryStore>();
    }
  }
  void TearDown() override {
    store_.reset();
    if (!path_.empty()) std::filesystem::remove_all(std::filesystem::path(path_).parent_path());
  }
  std::string path_;
  std::unique_ptr<JobStore> store_;
};

TEST_P(StoreTest, Store_4_3_InsertedJobIsReadable) {
  auto r = store_->Insert({Job("a", 10)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)[0].created);
  auto g = store_->Get("a");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->handler, "h");
  EXPECT_EQ(g->payload, "p");
  EXPECT_EQ(g->next_run, FromUnixNanos(10'000'000'000LL));
}

TEST_P(StoreTest, Store_4_4_LiveIdIsNotInsertedTwice) {
  ASSERT_TRUE(store_->Insert({Job("a", 10)}).ok());
  DurableJob other = Job("a", 99);
  other.payload = "other";
  auto r = store_->Insert({other});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE((*r)[0].created);
  EXPECT_EQ((*r)[0].job.payload, "p");
  EXPECT_EQ(store_->Get("a")->payload, "p");
}

TEST_P(StoreTest, Store_4_4_TerminalIdIsReplaced) {
  ASSERT_TRUE(store_->Insert({Job("a", 10, JobState::kCompleted)}).ok());
  auto r = store_->Insert({Job("a", 20)});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)[0].created);
  EXPECT_EQ(store_->Get("a")->state, JobState::kWaiting);
}

TEST_P(StoreTest, Store_4_3_DuplicateIdsInBatchAreRefused) {
  auto r = store_->Insert({Job("a", 1), Job("a", 2)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(store_->Get("a").ok());
}

TEST_P(StoreTest, Store_4_3_PutAndMutate) {
  ASSERT_TRUE(store_->Insert({Job("a", 10)}).ok());
  DurableJob j = *store_->Get("a");
  j.state = JobState::kRunning;
  j.lease_owner = "me";
  j.lease_expiry = FromUnixNanos(5);
  ASSERT_TRUE(store_->Put({j}).ok());
  EXPECT_EQ(store_->Get("a")->lease_owner, "me");
  auto m = store_->Mutate("a", [](DurableJob& x) {
    x.attempt = 3;
    return Status();
  });
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(store_->Get("a")->attempt, 3);
  auto bad = store_->Mutate("a", [](DurableJob& x) {
    x.attempt = 9;
    return Status::InvalidState("no");
  });
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidState);
  EXPECT_EQ(store_->Get("a")->attempt, 3);
  EXPECT_EQ(store_->Mutate("zz", [](DurableJob&) { return Status(); }).status().code(),
            StatusCode::kNotFound);
}

TEST_P(StoreTest, Store_4_3_PutWritesEveryField) {
  ASSERT_TRUE(store_->Insert({Job("a", 10)}).ok());
  // The run state only (the common case), then the spec too.
  DurableJob j = *store_->Get("a");
  j.state = JobState::kCompleted;
  j.runs = 4;
  j.next_run.reset();
  j.finished_at = FromUnixNanos(20);
  ASSERT_TRUE(store_->Put({j}).ok());
  auto got = *store_->Get("a");
  EXPECT_EQ(got.state, JobState::kCompleted);
  EXPECT_EQ(got.runs, 4u);
  EXPECT_FALSE(got.next_run.has_value());
  EXPECT_EQ(got.finished_at, FromUnixNanos(20));
  j.payload = "another payload";
  j.handler = "other";
  j.timeout = std::chrono::seconds(7);
  ASSERT_TRUE(store_->Put({j}).ok());
  got = *store_->Get("a");
  EXPECT_EQ(got.payload, "another payload");
  EXPECT_EQ(got.handler, "other");
  EXPECT_EQ(got.timeout, std::chrono::seconds(7));
  // A record not stored yet is inserted.
  DurableJob b = Job("b", 30);
  ASSERT_TRUE(store_->Put({b}).ok());
  EXPECT_EQ(store_->Get("b")->next_run, FromUnixNanos(30 * 1'000'000'000LL));
}

TEST_P(StoreTest, Store_4_2_LoadDueReturnsWindowAndRunning) {
  ASSERT_TRUE(
      store_
          ->Insert({Job("early", 5), Job("mid", 50), Job("late", 500),
                    Job("run", 1000, JobState::kRunning), Job("paused", 6, JobState::kPaused)})
          .ok());
  auto all = store_->LoadDue(std::nullopt, FromUnixNanos(100'000'000'000LL));
  ASSERT_TRUE(all.ok());
  std::vector<std::string> ids;
  for (auto& j : *all) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"early", "mid", "run"}));
  auto range = store_->LoadDue(FromUnixNanos(10'000'000'000LL), FromUnixNanos(600'000'000'000LL));
  ids.clear();
  for (auto& j : *range) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"mid", "late"}));
}

TEST_P(StoreTest, Store_5_3_ListPagesById) {
  std::vector<DurableJob> v;
  for (int i = 0; i < 25; ++i) v.push_back(Job("j" + std::to_string(100 + i), i));
  v[3].state = JobState::kPaused;
  ASSERT_TRUE(store_->Insert(v).ok());
  ListQuery q;
  q.limit = 10;
  auto p1 = store_->List(q);
  ASSERT_EQ(p1->size(), 10u);
  q.after_id = p1->back().id;
  auto p2 = store_->List(q);
  ASSERT_EQ(p2->size(), 10u);
  EXPECT_EQ(p2->front().id, "j110");
  ListQuery ps;
  ps.state = JobState::kPaused;
  auto paused = store_->List(ps);
  ASSERT_EQ(paused->size(), 1u);
  EXPECT_EQ(paused->front().id, "j103");
  auto counts = store_->CountByState();
  EXPECT_EQ((*counts)[static_cast<int>(JobState::kWaiting)], 24u);
  EXPECT_EQ((*counts)[static_cast<int>(JobState::kPaused)], 1u);
}

TEST_P(StoreTest, Store_4_7_PurgeDropsOldTerminalJobs) {
  DurableJob old = Job("old", 1, JobState::kCompleted);
  old.finished_at = FromUnixNanos(100);
  DurableJob fresh = Job("fresh", 1, JobState::kCancelled);
  fresh.finished_at = FromUnixNanos(10'000);
  ASSERT_TRUE(store_->Insert({old, fresh, Job("live", 1)}).ok());
  auto n = store_->Purge(FromUnixNanos(1'000));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  EXPECT_FALSE(store_->Get("old").ok());
  EXPECT_TRUE(store_->Get("fresh").ok());
  EXPECT_TRUE(store_->Get("live").ok());
}

TEST_P(StoreTest, Store_2_9_ChildrenWaitingForParent) {
  DurableJob c = Job("child", 0);
  c.next_run.reset();
  c.parent = "p";
  ASSERT_TRUE(store_->Insert({Job("p", 1), c}).ok());
  auto kids = store_->Children("p");
  ASSERT_EQ(kids->size(), 1u);
  EXPECT_EQ(kids->front().id, "child");
}

TEST_P(StoreTest, Store_4_5_OrphansWaitForFinishedOrMissingParents) {
  auto child = [&](std::string id, std::string parent) {
    DurableJob c = Job(std::move(id), 0);
    c.next_run.reset();
    c.parent = std::move(parent);
    return c;
  };
  DurableJob done = Job("done", 1);
  done.state = JobState::kCompleted;
  DurableJob dead = Job("dead", 1);
  dead.state = JobState::kDead;
  ASSERT_TRUE(
      store_
          ->Put({Job("live", 1), done, dead, child("of-live", "live"), child("of-done", "done"),
                 child("of-dead", "dead"), child("of-missing", "missing")})
          .ok());
  auto orphans = store_->Orphans();
  ASSERT_TRUE(orphans.ok()) << orphans.status().ToString();
  std::vector<std::string> ids;
  for (const auto& o : *orphans) ids.push_back(o.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"of-dead", "of-done", "of-missing"}));
}

TEST_P(StoreTest, Store_4_3_AllFieldsRoundTrip) {
  DurableJob j = Job("full", 7);
  j.kind = JobKind::kCron;
  j.at = FromUnixNanos(3);
  j.delay = Duration(4);
  j.period = Duration(5);
  j.cron = "*/5 * * * *";
  j.tz = "Europe/Paris";
  j.schedule = R"({"cron":"*/5 * * * *"})";
  j.retry = RetryPolicy::Exponential(4, Duration(6), Duration(60));
  j.retry.jitter = true;
  j.timeout = Duration(8);
  j.overlap = Overlap::kReplace;
  j.misfire = Misfire::kAll;
  j.max_catch_up = 9;
  j.parent = "par";
  j.attempt = 2;
  j.runs = 10;
  j.failures = 11;
  j.skips = 12;
  j.lease_owner = "o";
  j.lease_expiry = FromUnixNanos(13);
  j.run_scheduled_at = FromUnixNanos(14);
  j.recovered = true;
  j.last_error = "err";
  j.reason = "why";
  j.finished_at = FromUnixNanos(15);
  j.payload = std::string("bin\0ary", 7);
  ASSERT_TRUE(store_->Put({j}).ok());
  DurableJob g = *store_->Get("full");
  EXPECT_EQ(g.kind, j.kind);
  EXPECT_EQ(g.at, j.at);
  EXPECT_EQ(g.delay, j.delay);
  EXPECT_EQ(g.period, j.period);
  EXPECT_EQ(g.cron, j.cron);
  EXPECT_EQ(g.tz, j.tz);
  EXPECT_EQ(g.schedule, j.schedule);
  EXPECT_EQ(g.retry.max_attempts, 4);
  EXPECT_EQ(g.retry.backoff, Backoff::kExponential);
  EXPECT_TRUE(g.retry.jitter);
  EXPECT_EQ(g.retry.cap, Duration(60));
  EXPECT_EQ(g.timeout, j.timeout);
  EXPECT_EQ(g.overlap, Overlap::kReplace);
  EXPECT_EQ(g.misfire, Misfire::kAll);
  EXPECT_EQ(g.max_catch_up, 9);
  EXPECT_EQ(g.parent, "par");
  EXPECT_EQ(g.attempt, 2);
  EXPECT_EQ(g.runs, 10u);
  EXPECT_EQ(g.failures, 11u);
  EXPECT_EQ(g.skips, 12u);
  EXPECT_EQ(g.lease_owner, "o");
  EXPECT_EQ(g.lease_expiry, j.lease_expiry);
  EXPECT_EQ(g.run_scheduled_at, j.run_scheduled_at);
  EXPECT_TRUE(g.recovered);
  EXPECT_EQ(g.last_error, "err");
  EXPECT_EQ(g.reason, "why");
  EXPECT_EQ(g.finished_at, j.finished_at);
  EXPECT_EQ(g.payload, j.payload);
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "Sqlite" : "Memory"; });

TEST(SqliteStore, Store_4_3_ConcurrentSubmitsShareCommits) {
  std::string path = TempDb();
  auto store = SqliteStore::Open({.path = path}).value();
  constexpr int kThreads = 32, kEach = 50;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto r = store->Insert({Job("t" + std::to_string(t) + "-" + std::to_string(i), i)});
        ASSERT_TRUE(r.ok());
      }
    });
  }
  for (auto& t : ts) t.join();
  StoreStats s = store->GetStats();
  EXPECT_EQ(s.jobs_inserted, static_cast<uint64_t>(kThreads * kEach));
  EXPECT_LT(s.commits, s.writes) << "group commit should fold concurrent writes";
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(SqliteStore, Store_4_3_CommittedJobsSurviveReopen) {
  std::string path = TempDb();
  {
    auto store = SqliteStore::Open({.path = path}).value();
    ASSERT_TRUE(store->Insert({Job("keep", 1)}).ok());
  }
  auto store = SqliteStore::Open({.path = path}).value();
  EXPECT_TRUE(store->Get("keep").ok());
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// Runs `sql` on the connection `db`, or on the store file `path` through a
// connection of its own.
void RunSql(sqlite3* db, const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (err != nullptr ? err : "");
  sqlite3_free(err);
}
void RunSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  RunSql(db, sql);
  sqlite3_close(db);
}

// An op of several records whose write fails partway (the SQL error of a
// statement, here a trigger's) takes back what it wrote before it.
TEST(SqliteStore, Store_4_3_AnOpThatFailsPartwayWritesNothing) {
  std::string path = TempDb();
  SqliteStore::Open({.path = path}).value().reset();  // creates the schema
  RunSql(path,
         "CREATE TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.id = 'bad' "
         "BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END");
  {
    auto store = SqliteStore::Open({.path = path}).value();
    auto r = store->Insert({Job("a", 1), Job("bad", 1), Job("c", 1)});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("refused by a trigger"), std::string::npos)
        << r.status().message();
    EXPECT_FALSE(store->Put({Job("p", 1), Job("bad", 1)}).ok());
    EXPECT_TRUE(store->Insert({Job("d", 1)}).ok());
  }
  auto store = SqliteStore::Open({.path = path}).value();
  for (const char* id : {"a", "bad", "c", "p"}) {
    EXPECT_EQ(store->Get(id).status().code(), StatusCode::kNotFound) << id;
  }
  EXPECT_TRUE(store->Get("d").ok());
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

// When SQLite rolls a whole group-commit transaction back (it does on a full
// disk), only the op that failed fails: the others of its transaction are
// written in the next one, and none is reported failed yet written.
TEST(SqliteStore, Store_4_3_ARolledBackTransactionFailsOnlyItsCulprit) {
  std::string path = TempDb();
  SqliteStore::Open({.path = path}).value().reset();
  RunSql(path,
         "CREATE TRIGGER boom BEFORE INSERT ON jobs WHEN NEW.id = 'boom' "
         "BEGIN SELECT RAISE(ROLLBACK, 'rolled back by a trigger'); END");
  auto store = SqliteStore::Open({.path = path}).value();
  // Another connection holds the write lock, so that the store's committer
  // waits in its BEGIN while the ops queue: they go in at most two
  // transactions, and 'boom' shares one with 'y'.
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  RunSql(other, "BEGIN IMMEDIATE");
  std::promise<Status> held;
  store->PutAsync({}, [&](const Status& s) { held.set_value(s); });
  std::vector<std::promise<Status>> done(3);
  std::vector<std::string> ids = {"x", "boom", "y"};
  for (size_t i = 0; i < ids.size(); ++i) {
    store->InsertAsync({Job(ids[i], 1)}, [&done, i](const Result<std::vector<InsertOutcome>>& r) {
      done[i].set_value(r.status());
    });
  }
  RunSql(other, "COMMIT");
  sqlite3_close(other);
  EXPECT_TRUE(held.get_future().get().ok());
  std::vector<Status> got(done.size());
  for (size_t i = 0; i < done.size(); ++i) got[i] = done[i].get_future().get();
  EXPECT_TRUE(got[0].ok()) << got[0].message();
  EXPECT_NE(got[1].message().find("rolled back by a trigger"), std::string::npos)
      << got[1].message();
  EXPECT_TRUE(got[2].ok()) << got[2].message();
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(store->Get(ids[i]).ok(), got[i].ok()) << ids[i] << ": reported and stored differ";
  }
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(SqliteStore, Store_4_3_SecondOpenIsRefused) {
  std::string path = TempDb();
  auto a = SqliteStore::Open({.path = path});
  ASSERT_TRUE(a.ok());
  auto b = SqliteStore::Open({.path = path});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(SqliteStore, Store_4_3_BadOptionsAreRefused) {
  EXPECT_EQ(SqliteStore::Open({.path = ""}).status().code(), StatusCode::kInvalidArgument);
  SqliteStoreOptions o;
  o.path = TempDb();
  o.synchronous = "sometimes";
  EXPECT_EQ(SqliteStore::Open(o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ax
