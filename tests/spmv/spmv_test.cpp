// 2D sparse matrix-vector multiplication: the sequential helpers (CRS
// construction, Matrix Market, generators, transpose, partitioners) and
// the BSP SpMV against the plain CRS loop.
#include "sparse.h"
#include "spmv.h"

#include <app_util.h>
#include <bsp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace {

struct Mat {
    sp_crs A{};
    Mat() = default;
    Mat(const Mat &) = delete;
    ~Mat() { sp_free(&A); }
};
struct Part {
    sp_part p{};
    ~Part() { sp_part_free(&p); }
};

std::vector<double> rand_vec(size_t n, uint64_t seed)
{
    std::vector<double> v(n);
    uint64_t rng = seed;
    for (double &a : v) a = app_rand01(&rng) - 0.25;
    return v;
}

// |y - yref| against the sum of |a_ij x_j| of each row
void expect_close(const sp_crs &A, const std::vector<double> &x, const std::vector<double> &y,
                  const std::vector<double> &yref)
{
    ASSERT_EQ(yref.size(), y.size());
    for (size_t i = 0; i < A.m; ++i) {
        double scale = 0;
        for (size_t k = A.rowptr[i]; k < A.rowptr[i + 1]; ++k) scale += std::fabs(A.val[k] * x[A.col[k]]);
        ASSERT_NEAR(yref[i], y[i], 1e-14 * scale + 1e-300) << "row " << i;
    }
}

void random_rect(size_t m, size_t n, size_t nnz, uint64_t seed, sp_crs *A)
{
    std::vector<uint32_t> I(nnz), J(nnz);
    std::vector<double> V(nnz);
    uint64_t rng = seed;
    for (size_t k = 0; k < nnz; ++k) {
        I[k] = uint32_t(app_rand64(&rng) % m);
        J[k] = uint32_t(app_rand64(&rng) % n);
        V[k] = app_rand01(&rng) + 0.5;
    }
    ASSERT_EQ(0, sp_from_coo(m, n, nnz, I.data(), J.data(), V.data(), 1, A));
}

void random_part(const sp_crs &A, unsigned P, uint64_t seed, sp_part *part)
{
    part->P = P;
    part->owner_nz = static_cast<unsigned *>(malloc((A.nnz + 1) * sizeof(unsigned)));
    part->owner_x = static_cast<unsigned *>(malloc((A.n + 1) * sizeof(unsigned)));
    part->owner_y = static_cast<unsigned *>(malloc((A.m + 1) * sizeof(unsigned)));
    uint64_t rng = seed;
    for (size_t k = 0; k < A.nnz; ++k) part->owner_nz[k] = unsigned(app_rand64(&rng) % P);
    for (size_t j = 0; j < A.n; ++j) part->owner_x[j] = unsigned(app_rand64(&rng) % P);
    for (size_t i = 0; i < A.m; ++i) part->owner_y[i] = unsigned(app_rand64(&rng) % P);
}

// ---- sequential helpers ------------------------------------------------

TEST(Sparse, FromCooSortsAndMergesDuplicates)
{
    const uint32_t I[] = { 2, 0, 2, 1, 0, 2 }, J[] = { 1, 3, 0, 2, 0, 1 };
    const double V[] = { 1, 2, 3, 4, 5, 6 };
    Mat s, k;
    ASSERT_EQ(0, sp_from_coo(3, 4, 6, I, J, V, 1, &s.A));
    ASSERT_EQ(5u, s.A.nnz);
    const size_t rp[] = { 0, 2, 3, 5 };
    const uint32_t col[] = { 0, 3, 2, 0, 1 };
    const double val[] = { 5, 2, 4, 3, 7 };
    for (int i = 0; i < 4; ++i) EXPECT_EQ(rp[i], s.A.rowptr[i]);
    for (int k2 = 0; k2 < 5; ++k2) {
        EXPECT_EQ(col[k2], s.A.col[k2]);
        EXPECT_EQ(val[k2], s.A.val[k2]);
    }
    ASSERT_EQ(0, sp_from_coo(3, 4, 6, I, J, V, 0, &k.A));
    EXPECT_EQ(1.0, k.A.val[4]);   // the first duplicate kept
    Mat bad;
    const uint32_t Ib[] = { 3 }, Jb[] = { 0 };
    EXPECT_EQ(-1, sp_from_coo(3, 4, 1, Ib, Jb, nullptr, 1, &bad.A));
}

TEST(Sparse, MatrixMarketRoundTripAndSymmetric)
{
    char path[] = "/tmp/sstep_spmv_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    Mat a, b;
    random_rect(17, 11, 60, 3, &a.A);
    ASSERT_EQ(0, sp_write_mm(path, &a.A));
    char err[256];
    ASSERT_EQ(0, sp_read_mm(path, &b.A, err, sizeof err)) << err;
    ASSERT_EQ(a.A.nnz, b.A.nnz);
    for (size_t k = 0; k < a.A.nnz; ++k) {
        EXPECT_EQ(a.A.col[k], b.A.col[k]);
        EXPECT_EQ(a.A.val[k], b.A.val[k]);
    }
    // symmetric pattern with a comment and the diagonal
    FILE *f = fopen(path, "w");
    fputs("%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n3 3 3\n1 1\n2 1\n3 2\n", f);
    fclose(f);
    Mat c;
    ASSERT_EQ(0, sp_read_mm(path, &c.A, err, sizeof err)) << err;
    EXPECT_EQ(5u, c.A.nnz);   // (1,1), (2,1), (1,2), (3,2), (2,3)
    EXPECT_EQ(1.0, c.A.val[0]);
    f = fopen(path, "w");
    fputs("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", f);
    fclose(f);
    Mat d;
    EXPECT_EQ(-1, sp_read_mm(path, &d.A, err, sizeof err));
    unlink(path);
    EXPECT_EQ(-1, sp_read_mm("/nonexistent/file.mtx", &d.A, err, sizeof err));
}

TEST(Sparse, LaplaciansHaveZeroRowSumsInside)
{
    Mat l2, l3;
    ASSERT_EQ(0, sp_lap2d(5, 4, &l2.A));
    EXPECT_EQ(20u, l2.A.m);
    EXPECT_EQ(5u * 20 - 2 * 5 - 2 * 4, l2.A.nnz);
    ASSERT_EQ(0, sp_lap3d(3, 4, 5, &l3.A));
    EXPECT_EQ(60u, l3.A.m);
    std::vector<double> one(60, 1.0), y(60);
    sp_spmv(&l3.A, one.data(), y.data());
    EXPECT_EQ(0.0, y[1 + 3 * 1 + 12 * 1]);   // interior node
    EXPECT_EQ(3.0, y[0]);                    // corner: 6 - 3 neighbours
    char err[128];
    Mat s;
    EXPECT_EQ(0, sp_make("lap2d:7x3", &s.A, err, sizeof err));
    EXPECT_EQ(21u, s.A.n);
    Mat bad;   // a failed sp_make leaves its output empty: not s, which holds a matrix
    EXPECT_EQ(-1, sp_make("lap2d:x", &bad.A, err, sizeof err));
}

TEST(Sparse, PowerLawIsReproducibleWithDanglingNodes)
{
    Mat a, b;
    ASSERT_EQ(0, sp_powerlaw(5000, 6.0, 2.5, 99, &a.A));
    ASSERT_EQ(0, sp_powerlaw(5000, 6.0, 2.5, 99, &b.A));
    ASSERT_EQ(a.A.nnz, b.A.nnz);
    EXPECT_GT(a.A.nnz, 5000u * 4);
    size_t dangling = 0, maxdeg = 0;
    for (size_t i = 0; i < a.A.m; ++i) {
        size_t d = a.A.rowptr[i + 1] - a.A.rowptr[i];
        dangling += d == 0;
        maxdeg = d > maxdeg ? d : maxdeg;
        for (size_t k = a.A.rowptr[i]; k < a.A.rowptr[i + 1]; ++k) EXPECT_NE(i, a.A.col[k]);
    }
    EXPECT_GT(dangling, 100u);
    EXPECT_GT(maxdeg, 100u);   // hubs
    for (size_t k = 0; k < a.A.nnz; ++k) ASSERT_EQ(a.A.col[k], b.A.col[k]);
}

TEST(Sparse, TransposeTwiceIsIdentity)
{
    Mat a, t, tt;
    random_rect(30, 20, 150, 5, &a.A);
    ASSERT_EQ(0, sp_transpose(&a.A, &t.A));
    ASSERT_EQ(0, sp_transpose(&t.A, &tt.A));
    EXPECT_EQ(20u, t.A.m);
    ASSERT_EQ(a.A.nnz, tt.A.nnz);
    for (size_t k = 0; k < a.A.nnz; ++k) {
        EXPECT_EQ(a.A.col[k], tt.A.col[k]);
        EXPECT_EQ(a.A.val[k], tt.A.val[k]);
    }
}

TEST(Sparse, PartitionersBalanceAndFollowTheDiagonal)
{
    Mat a;
    ASSERT_EQ(0, sp_lap2d(40, 40, &a.A));
    for (int kind = 0; kind < 3; ++kind)
        for (unsigned P : { 1u, 2u, 3u, 4u, 6u, 8u }) {
            Part pt;
            ASSERT_EQ(0, sp_partition(&a.A, P, sp_part_kind(kind), &pt.p));
            sp_part_stats st;
            ASSERT_EQ(0, sp_part_evaluate(&a.A, &pt.p, &st));
            EXPECT_LE(st.max_nnz, a.A.nnz / P + a.A.nnz / P / 10 + 10) << kind << " " << P;
            for (size_t i = 0; i < a.A.m; ++i) {
                EXPECT_EQ(pt.p.owner_x[i], pt.p.owner_y[i]);
                for (size_t k = a.A.rowptr[i]; k < a.A.rowptr[i + 1]; ++k)
                    if (a.A.col[k] == i) {
                        EXPECT_EQ(pt.p.owner_nz[k], pt.p.owner_y[i]);
                    }
            }
            if (P == 1) {
                EXPECT_EQ(0u, st.volume);
            }
        }
    Part r;
    ASSERT_EQ(0, sp_partition(&a.A, 4, SP_PART_ROWS, &r.p));
    for (size_t k = 1; k < a.A.m; ++k) EXPECT_LE(r.p.owner_y[k - 1], r.p.owner_y[k]);
    EXPECT_EQ(0, sp_part_kind_from_name("rows"));
    EXPECT_EQ(2, sp_part_kind_from_name("2d"));
    EXPECT_EQ(-1, sp_part_kind_from_name("mondriaan"));
}

// ---- BSP SpMV through the library call ---------------------------------

void check_bsp(const sp_crs &A, const sp_part *part, unsigned P, spmv_variant v)
{
    if (v == SPMV_HP && !spmv_hp_available()) return;   // no bsp_direct_get on this engine
    std::vector<double> x = rand_vec(A.n, 11 + A.nnz), y(A.m, -7.0), yref(A.m);
    sp_spmv(&A, x.data(), yref.data());
    ASSERT_EQ(0, bsp_spmv(&A, part, x.data(), y.data(), P, v));
    expect_close(A, x, y, yref);
}

using Case = std::tuple<std::string, unsigned, int, int>;   // matrix, P, part, variant
class SpmvLib : public ::testing::TestWithParam<Case> {};

TEST_P(SpmvLib, MatchesCrs)
{
    const std::string spec = std::get<0>(GetParam());
    const unsigned P = std::get<1>(GetParam());
    if (std::get<3>(GetParam()) == SPMV_HP && !spmv_hp_available())
        GTEST_SKIP() << "this engine has no bsp_direct_get";
    Mat a;
    char err[256];
    if (spec == "rect") {
        random_rect(57, 31, 400, 17, &a.A);
    } else {
        ASSERT_EQ(0, sp_make(spec.c_str(), &a.A, err, sizeof err)) << err;
    }
    if (spec.rfind("powerlaw", 0) == 0) sp_randomize_values(&a.A, 5);
    Part pt;
    if (std::get<2>(GetParam()) == 3) {
        random_part(a.A, P, 1000 + P, &pt.p);
    } else {
        ASSERT_EQ(0, sp_partition(&a.A, P, sp_part_kind(std::get<2>(GetParam())), &pt.p));
    }
    check_bsp(a.A, &pt.p, P, spmv_variant(std::get<3>(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(
    All, SpmvLib,
    ::testing::Combine(::testing::Values("lap2d:23x17", "lap3d:6", "powerlaw:2000", "rect"),
                       ::testing::Values(1u, 2u, 3u, 4u, 5u, 8u),
                       ::testing::Values(0, 1, 2, 3),   // rows, cols, 2d, random
                       ::testing::Values(0, 1)));       // get/put, hp

TEST(Spmv, DefaultPartitionAndTinyMatrices)
{
    Mat a;
    ASSERT_EQ(0, sp_lap2d(2, 2, &a.A));   // 4 rows, more processes than rows
    for (unsigned P : { 1u, 3u, 8u })
        for (int v = 0; v < 2; ++v) check_bsp(a.A, nullptr, P, spmv_variant(v));
    Mat e;   // empty rows and columns
    const uint32_t I[] = { 0, 4 }, J[] = { 5, 0 };
    const double V[] = { 2.0, 3.0 };
    ASSERT_EQ(0, sp_from_coo(6, 7, 2, I, J, V, 1, &e.A));
    for (unsigned P : { 2u, 4u }) {
        Part pt;
        random_part(e.A, P, 3, &pt.p);
        check_bsp(e.A, &pt.p, P, SPMV_HP);
        check_bsp(e.A, &pt.p, P, SPMV_GETPUT);
    }
}

TEST(Spmv, PartitionForOtherPIsRejected)
{
    Mat a;
    ASSERT_EQ(0, sp_lap2d(5, 5, &a.A));
    Part pt;
    ASSERT_EQ(0, sp_partition(&a.A, 3, SP_PART_ROWS, &pt.p));
    std::vector<double> x(25, 1.0), y(25);
    EXPECT_EQ(-1, bsp_spmv(&a.A, &pt.p, x.data(), y.data(), 2, SPMV_HP));
    // the run after a rejected one works
    EXPECT_EQ(0, bsp_spmv(&a.A, &pt.p, x.data(), y.data(), 3, SPMV_HP));
}

// ---- SPMD level: repeated products x <- A x / ||.|| with the vector
// staying distributed, alternating the two algorithms ------------------

struct IterArgs {
    const sp_crs *A;
    const sp_part *part;
    unsigned P;
    int iters;
    std::vector<double> *x;   // in: x0; out: x after iters
};
thread_local IterArgs *iter_args;

void iter_entry()
{
    IterArgs *c = iter_args;
    bsp_begin(c ? c->P : bsp_nprocs());
    if (bsp_pid() != 0) c = nullptr;
    spmv_local L;
    if (spmv_setup(&L, c ? c->A : nullptr, c ? c->part : nullptr) != 0) bsp_abort("setup failed\n");
    spmv_set_x(&L, c ? c->x->data() : nullptr);
    for (int it = 0; it < 4; ++it) {
        spmv_mv(&L, it % 2 || !spmv_hp_available() ? SPMV_GETPUT : SPMV_HP);
        // owner_x == owner_y, so the owned lists agree: y -> x locally
        for (size_t t = 0; t < L.nown_y; ++t) L.x[t] = 0.125 * L.y[t];
        bsp_sync();   // x changed: sync before the next direct_get
    }
    spmv_gather_x(&L, L.x, c ? c->x->data() : nullptr);
    spmv_free(&L);
    bsp_end();
}

class SpmvSpmd : public ::testing::TestWithParam<unsigned> {};

TEST_P(SpmvSpmd, RepeatedProductsStayDistributed)
{
    Mat a;
    ASSERT_EQ(0, sp_lap2d(19, 21, &a.A));
    Part pt;
    ASSERT_EQ(0, sp_partition(&a.A, GetParam(), SP_PART_2D, &pt.p));
    std::vector<double> x = rand_vec(a.A.n, 4), ref = x, tmp(a.A.n);
    for (int it = 0; it < 4; ++it) {
        sp_spmv(&a.A, ref.data(), tmp.data());
        for (size_t i = 0; i < a.A.n; ++i) ref[i] = 0.125 * tmp[i];
    }
    IterArgs args{ &a.A, &pt.p, GetParam(), 4, &x };
    iter_args = &args;
    bsp_init(iter_entry, 0, nullptr);
    iter_entry();
    iter_args = nullptr;
    for (size_t i = 0; i < a.A.n; ++i) ASSERT_NEAR(ref[i], x[i], 1e-13) << i;
}

INSTANTIATE_TEST_SUITE_P(P, SpmvSpmd, ::testing::Values(1u, 2u, 3u, 4u, 6u, 8u));

// ---- SPMV_HP on shared memory: the local product reads the ghost x_j in
// place from their owners (packed columns); the copying path, taken where
// the packed columns do not fit, must give the same product -------------

struct SharedArgs {
    const sp_crs *A;
    const sp_part *part;
    unsigned P;
    const std::vector<double> *x;
    std::vector<double> *y_inplace, *y_copy;
};
thread_local SharedArgs *shared_args;

void shared_entry()
{
    SharedArgs *c = shared_args;
    bsp_begin(c ? c->P : bsp_nprocs());
    if (bsp_pid() != 0) c = nullptr;
    spmv_local L;
    if (spmv_setup(&L, c ? c->A : nullptr, c ? c->part : nullptr) != 0) bsp_abort("setup failed\n");
    if ((L.colz != nullptr) != (bsp_nprocs() > 1))
        bsp_abort("pid %u: in-place reads %s\n", bsp_pid(), L.colz ? "on at p = 1" : "off");
    spmv_set_x(&L, c ? c->x->data() : nullptr);
    spmv_mv(&L, SPMV_HP);
    spmv_gather_y(&L, L.y, c ? c->y_inplace->data() : nullptr);
    free(L.colz);   // as if the packed columns did not fit: ghost copies
    L.colz = nullptr;
    spmv_mv(&L, SPMV_HP);
    spmv_gather_y(&L, L.y, c ? c->y_copy->data() : nullptr);
    spmv_free(&L);
    bsp_end();
}

class SpmvShared : public ::testing::TestWithParam<unsigned> {};

TEST_P(SpmvShared, InPlaceReadsMatchGhostCopies)
{
    if (!spmv_hp_available()) GTEST_SKIP() << "this engine has no shared memory";
    const unsigned P = GetParam();
    Mat a;
    char err[256];
    ASSERT_EQ(0, sp_make("powerlaw:3000", &a.A, err, sizeof err)) << err;
    sp_randomize_values(&a.A, 7);
    Part pt;
    random_part(a.A, P, 11, &pt.p);
    std::vector<double> x = rand_vec(a.A.n, 5), ref(a.A.m), y1(a.A.m, -1), y2(a.A.m, -2);
    sp_spmv(&a.A, x.data(), ref.data());
    SharedArgs args{ &a.A, &pt.p, P, &x, &y1, &y2 };
    shared_args = &args;
    bsp_init(shared_entry, 0, nullptr);
    shared_entry();
    shared_args = nullptr;
    expect_close(a.A, x, y1, ref);
    expect_close(a.A, x, y2, ref);
}

INSTANTIATE_TEST_SUITE_P(P, SpmvShared, ::testing::Values(1u, 2u, 3u, 5u));

} // namespace
