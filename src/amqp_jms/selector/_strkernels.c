/* Optional accelerator for the selector's string tests (arrow_strings.py has the numpy fallback).
 *
 * One pass over an Arrow string array's offsets buffer and data buffer answers, for every row,
 * whether its bytes equal one of a few literals (``=``, ``IN``) or start with one (prefix
 * ``LIKE``). numpy cannot load a word at an arbitrary byte offset in one step (two aligned gathers
 * and shifts: ~3 ns per row), Arrow's kernels test row by row through branches that mispredict on
 * mixed lengths; here each row costs one offset load, one unaligned load of its first 8 bytes
 * and no unpredictable branch (measured on this project's loaded 2-core machine: 1.2 ns per row for
 * one literal or a prefix, 1.7 ns for an IN list, against 3-5 ns for numpy and 3-22 ns for Arrow):
 *
 * - one literal, a prefix, or literals over 7 bytes: per literal a length test and a masked word
 *   compare (literals over 8 bytes compare the rest with memcmp, only on rows whose length and
 *   first 8 bytes already match);
 * - several literals of at most 7 bytes (IN lists, ORs of equalities): the row's first bytes and
 *   length packed in one 64-bit key, looked up in a perfect hash table built per call (multipliers
 *   from a fixed sequence are tried until the literals land in distinct slots; if none does, the
 *   literal loop above), so the cost per row does not grow with the list.
 *
 * Every size and offset comes from user data, so nothing is trusted: the offsets buffer must hold
 * offset + length + 1 entries, the first offset must be >= 0 and the last <= the data buffer's
 * size, and one vectorized pass checks that the offsets never decrease (else ValueError naming
 * the row). Under those checks every row lies inside the data buffer: rows that start at least 8
 * bytes before its end load 8 bytes, the last few copy what remains into a zeroed word. Offsets
 * are read with memcpy (any alignment). The GIL is released around the passes (the buffers are
 * held by Py_buffer views). Results are 0/1 bytes, meaningless on null rows (the caller masks
 * them with the validity bitmap).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t word;  /* the literal's first (up to) 8 bytes, in memory order, zero padded */
    uint64_t mask;  /* 0xFF in memory order for each of those bytes */
    int64_t len;
    const unsigned char *rest;  /* bytes 8.. (when len > 8) */
} lit_t;

/* A row's key: its first min(n, 7) bytes, zero padded, with min(n, 8) in byte 7 (memory order).
 * Two rows have the same key iff they have the same length and bytes, or are both at least 8
 * bytes long and share their first 7 (byte 7 = 8: no literal of at most 7 bytes has that key). */
typedef struct {
    const lit_t *lits;
    Py_ssize_t nlits;
    const uint64_t *slots; /* the perfect hash table of the literals' keys (empty: byte 7 0xFF) */
    uint64_t mult;
    int shift;
    uint64_t kmask[9];     /* kmask[m]: 0xFF in memory order for the first min(m, 7) bytes */
    uint64_t ktag[9];      /* ktag[m]: m in byte 7 */
} ctx_t;

#define ROW_KEY(n) ((w & ctx->kmask[(n) < 8 ? (n) : 8]) | ctx->ktag[(n) < 8 ? (n) : 8])

/* offsets are read with memcpy: any alignment is valid (compiles to a plain load on x86/ARM64) */
static inline int64_t
load_int32_t(const char *base, Py_ssize_t i)
{
    int32_t v;
    memcpy(&v, base + (size_t)i * 4, 4);
    return v;
}

static inline int64_t
load_int64_t(const char *base, Py_ssize_t i)
{
    int64_t v;
    memcpy(&v, base + (size_t)i * 8, 8);
    return v;
}

#define LOAD_OFF(OFF_T, base, i) load_##OFF_T(base, i)

/* A row's answer from n (the row's byte length), row (its first byte) and w (its first 8 bytes,
 * zero padded past the buffer's end). K: the number of literals when known (1, or 4 after padding
 * with literals no row matches, so the loop unrolls), 0: ctx->nlits. */
#define ROW_LITS(PREFIX, LONG, K)                                                                 \
    unsigned hit = 0;                                                                             \
    for (Py_ssize_t k = 0; k < (K ? K : ctx->nlits); k++) {                                       \
        const lit_t *l = &ctx->lits[k];                                                           \
        unsigned ok = (unsigned)(PREFIX ? n >= l->len : n == l->len) &                            \
                      (unsigned)((w & l->mask) == l->word);                                       \
        if (LONG && l->len > 8 && ok) {                                                           \
            ok = memcmp(row + 8, l->rest, (size_t)(l->len - 8)) == 0;                             \
        }                                                                                         \
        hit |= ok;                                                                                \
    }

/* Equality with several literals of at most 7 bytes: the row's key looked up in the hash table
 * (measured: as fast as comparing with 2 keys in registers, faster from 3 on). */
#define ROW_HASH                                                                                  \
    uint64_t key = ROW_KEY(n);                                                                    \
    unsigned hit = (unsigned)(ctx->slots[(key * ctx->mult) >> ctx->shift] == key);               \
    (void)row;

/* Whether the offsets of rows 0 .. length-1 never decrease: one pass the compiler vectorizes
 * (no early exit), about 0.1 ns per row; then the first decreasing row, or -1. With the first
 * offset >= 0 and the last <= data_len (checked by the caller) every row lies inside the data. */
#define DEFINE_VALIDATE(NAME, OFF_T)                                                              \
    static Py_ssize_t NAME(const char *off, Py_ssize_t length)                                   \
    {                                                                                             \
        int bad = 0;                                                                              \
        for (Py_ssize_t i = 0; i < length; i++) {                                                 \
            bad |= LOAD_OFF(OFF_T, off, i + 1) < LOAD_OFF(OFF_T, off, i);                         \
        }                                                                                         \
        if (!bad) {                                                                               \
            return -1;                                                                            \
        }                                                                                         \
        for (Py_ssize_t i = 0; i < length; i++) {                                                 \
            if (LOAD_OFF(OFF_T, off, i + 1) < LOAD_OFF(OFF_T, off, i)) {                          \
                return i;                                                                         \
            }                                                                                     \
        }                                                                                         \
        return -1;                                                                                \
    }

DEFINE_VALIDATE(validate32, int32_t)
DEFINE_VALIDATE(validate64, int64_t)

/* The loop over rows, on validated offsets. Rows that start at least 8 bytes before the data's
 * end (found by bisection: offsets do not decrease) read their first 8 bytes in one unaligned
 * load; the last few copy what is there into a zeroed word. */
#define DEFINE_KERNEL(NAME, OFF_T, ROW)                                                           \
    static void NAME(const char *off, Py_ssize_t length, const unsigned char *data,               \
                     int64_t data_len, const ctx_t *ctx, unsigned char *restrict out)             \
    {                                                                                             \
        Py_ssize_t lo = 0, hi = length; /* cut: the first row starting past data_len - 8 */       \
        while (lo < hi) {                                                                         \
            Py_ssize_t mid = lo + (hi - lo) / 2;                                                  \
            if (LOAD_OFF(OFF_T, off, mid) <= data_len - 8) {                                      \
                lo = mid + 1;                                                                     \
            } else {                                                                              \
                hi = mid;                                                                         \
            }                                                                                     \
        }                                                                                         \
        Py_ssize_t cut = lo, i = 0;                                                               \
        int64_t start = LOAD_OFF(OFF_T, off, 0);                                                  \
        for (; i < cut; i++) {                                                                    \
            int64_t end = LOAD_OFF(OFF_T, off, i + 1);                                            \
            int64_t n = end - start;                                                              \
            const unsigned char *row = data + start;                                              \
            uint64_t w;                                                                           \
            memcpy(&w, row, 8);                                                                   \
            ROW                                                                                   \
            out[i] = (unsigned char)hit;                                                          \
            start = end;                                                                          \
        }                                                                                         \
        for (; i < length; i++) {                                                                 \
            int64_t end = LOAD_OFF(OFF_T, off, i + 1);                                            \
            int64_t n = end - start;                                                              \
            const unsigned char *row = data + start;                                              \
            uint64_t w = 0;                                                                       \
            memcpy(&w, row, (size_t)(data_len - start < 8 ? data_len - start : 8));               \
            ROW                                                                                   \
            out[i] = (unsigned char)hit;                                                          \
            start = end;                                                                          \
        }                                                                                         \
    }

DEFINE_KERNEL(eq32_any, int32_t, ROW_LITS(0, 0, 0))
DEFINE_KERNEL(eq32_1, int32_t, ROW_LITS(0, 0, 1))
DEFINE_KERNEL(eq32_4, int32_t, ROW_LITS(0, 0, 4))
DEFINE_KERNEL(eq32_long_any, int32_t, ROW_LITS(0, 1, 0))
DEFINE_KERNEL(eq32_long_1, int32_t, ROW_LITS(0, 1, 1))
DEFINE_KERNEL(eq32_long_4, int32_t, ROW_LITS(0, 1, 4))
DEFINE_KERNEL(prefix32_any, int32_t, ROW_LITS(1, 0, 0))
DEFINE_KERNEL(prefix32_1, int32_t, ROW_LITS(1, 0, 1))
DEFINE_KERNEL(prefix32_4, int32_t, ROW_LITS(1, 0, 4))
DEFINE_KERNEL(prefix32_long_any, int32_t, ROW_LITS(1, 1, 0))
DEFINE_KERNEL(prefix32_long_1, int32_t, ROW_LITS(1, 1, 1))
DEFINE_KERNEL(prefix32_long_4, int32_t, ROW_LITS(1, 1, 4))
DEFINE_KERNEL(eq64_any, int64_t, ROW_LITS(0, 0, 0))
DEFINE_KERNEL(eq64_1, int64_t, ROW_LITS(0, 0, 1))
DEFINE_KERNEL(eq64_4, int64_t, ROW_LITS(0, 0, 4))
DEFINE_KERNEL(eq64_long_any, int64_t, ROW_LITS(0, 1, 0))
DEFINE_KERNEL(eq64_long_1, int64_t, ROW_LITS(0, 1, 1))
DEFINE_KERNEL(eq64_long_4, int64_t, ROW_LITS(0, 1, 4))
DEFINE_KERNEL(prefix64_any, int64_t, ROW_LITS(1, 0, 0))
DEFINE_KERNEL(prefix64_1, int64_t, ROW_LITS(1, 0, 1))
DEFINE_KERNEL(prefix64_4, int64_t, ROW_LITS(1, 0, 4))
DEFINE_KERNEL(prefix64_long_any, int64_t, ROW_LITS(1, 1, 0))
DEFINE_KERNEL(prefix64_long_1, int64_t, ROW_LITS(1, 1, 1))
DEFINE_KERNEL(prefix64_long_4, int64_t, ROW_LITS(1, 1, 4))
DEFINE_KERNEL(hash32, int32_t, ROW_HASH)
DEFINE_KERNEL(hash64, int64_t, ROW_HASH)

typedef void (*kernel_t)(const char *, Py_ssize_t, const unsigned char *, int64_t, const ctx_t *,
                         unsigned char *restrict);

/* [width == 8][prefix][any literal > 8 bytes][0: any count, 1: one literal, 2: 2-4] */
static const kernel_t kernels[2][2][2][3] = {
    {{{eq32_any, eq32_1, eq32_4}, {eq32_long_any, eq32_long_1, eq32_long_4}},
     {{prefix32_any, prefix32_1, prefix32_4}, {prefix32_long_any, prefix32_long_1, prefix32_long_4}}},
    {{{eq64_any, eq64_1, eq64_4}, {eq64_long_any, eq64_long_1, eq64_long_4}},
     {{prefix64_any, prefix64_1, prefix64_4}, {prefix64_long_any, prefix64_long_1, prefix64_long_4}}},
};

static inline uint64_t
splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A perfect hash table of the literals' keys in ctx->slots: 1, or 0 when no multiplier was
 * found (the literal loop is used then), or -1 with MemoryError set. Deterministic: the
 * multipliers come from a fixed sequence. */
static int
build_hash(ctx_t *ctx, const uint64_t *keys, uint64_t empty, uint64_t **table)
{
    uint64_t state = 0x5E1EC7025EEDULL;
    for (int bits = 4; bits <= 16; bits++) {
        size_t size = (size_t)1 << bits;
        if (size < 4 * (size_t)ctx->nlits) {
            continue;
        }
        uint64_t *slots = PyMem_Malloc(size * sizeof(uint64_t));
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        for (int attempt = 0; attempt < 32; attempt++) {
            uint64_t mult = splitmix64(&state) | 1;
            int shift = 64 - bits, ok = 1;
            for (size_t j = 0; j < size; j++) {
                slots[j] = empty;
            }
            for (Py_ssize_t k = 0; k < ctx->nlits && ok; k++) {
                uint64_t *slot = &slots[(keys[k] * mult) >> shift];
                if (*slot == empty) {
                    *slot = keys[k];
                } else if (*slot != keys[k]) {
                    ok = 0; /* two different literals in one slot */
                }
            }
            if (ok) {
                ctx->slots = slots;
                ctx->mult = mult;
                ctx->shift = shift;
                *table = slots;
                return 1;
            }
        }
        PyMem_Free(slots);
    }
    return 0;
}

PyDoc_STRVAR(match_doc,
"match(offsets, data, offset, length, width, literals, prefix, out, /) -> None\n\n"
"For rows offset .. offset+length of an Arrow string array (width 4: int32 offsets, 8: int64),\n"
"write into out[i] (a writable byte buffer of at least length bytes) 1 when row offset+i\n"
"equals one of literals (a tuple of bytes) -- or, with prefix true, starts with one -- else 0.\n"
"Null rows get an arbitrary 0/1 (the caller masks them). Raises ValueError on any buffer or\n"
"offset that would read or write out of bounds, or decreasing offsets.");

static PyObject *
match(PyObject *self, PyObject *args)
{
    Py_buffer offsets_buf = {0}, data_buf = {0}, out_buf = {0};
    Py_ssize_t offset, length;
    int width, prefix;
    PyObject *literals;
    lit_t *lits = NULL;
    uint64_t *table = NULL, *keys = NULL;
    PyObject *result = NULL;
    Py_ssize_t bad_row = -1;

    if (!PyArg_ParseTuple(args, "y*y*nniO!pw*:match", &offsets_buf, &data_buf, &offset, &length,
                          &width, &PyTuple_Type, &literals, &prefix, &out_buf)) {
        return NULL;
    }
    if (width != 4 && width != 8) {
        PyErr_Format(PyExc_ValueError, "offset width must be 4 or 8, not %d", width);
        goto done;
    }
    if (offset < 0 || length < 0) {
        PyErr_Format(PyExc_ValueError, "offset (%zd) and length (%zd) must be >= 0", offset, length);
        goto done;
    }
    /* entries needed: offset + length + 1, without overflow */
    if (offset > PY_SSIZE_T_MAX / width - 1 - length ||
        offsets_buf.len / width < offset + length + 1) {
        PyErr_Format(PyExc_ValueError,
                     "offsets buffer of %zd bytes is too short for offset %zd + length %zd",
                     offsets_buf.len, offset, length);
        goto done;
    }
    if (out_buf.len < length) {
        PyErr_Format(PyExc_ValueError, "output buffer of %zd bytes is shorter than length %zd",
                     out_buf.len, length);
        goto done;
    }
    const unsigned char *data = (const unsigned char *)data_buf.buf;
    int64_t data_len = (int64_t)data_buf.len;
    int64_t first, last;
    if (width == 4) {
        const char *off = (const char *)offsets_buf.buf + (size_t)offset * 4;
        first = LOAD_OFF(int32_t, off, 0);
        last = LOAD_OFF(int32_t, off, length);
    } else {
        const char *off = (const char *)offsets_buf.buf + (size_t)offset * 8;
        first = LOAD_OFF(int64_t, off, 0);
        last = LOAD_OFF(int64_t, off, length);
    }
    if (first < 0 || last > data_len || last < first) {
        PyErr_Format(PyExc_ValueError,
                     "offsets %lld .. %lld do not lie within the data buffer of %lld bytes",
                     (long long)first, (long long)last, (long long)data_len);
        goto done;
    }

    Py_ssize_t nlits = PyTuple_GET_SIZE(literals);
    lits = PyMem_Calloc(nlits > 4 ? (size_t)nlits : 4, sizeof(lit_t));
    if (lits == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < nlits; k++) {
        PyObject *item = PyTuple_GET_ITEM(literals, k);
        if (!PyBytes_Check(item)) {
            PyErr_Format(PyExc_TypeError, "literals must be bytes, not %.100s",
                         Py_TYPE(item)->tp_name);
            goto done;
        }
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(item);
        Py_ssize_t len = PyBytes_GET_SIZE(item);
        size_t head = len < 8 ? (size_t)len : 8;
        unsigned char ones[8];
        memset(ones, 0xFF, head);
        memcpy(&lits[k].word, s, head);
        memcpy(&lits[k].mask, ones, head);
        lits[k].len = len;
        lits[k].rest = s + head;
    }

    int any_long = 0;
    for (Py_ssize_t k = 0; k < nlits; k++) {
        any_long |= lits[k].len > 8;
    }
    for (Py_ssize_t k = nlits; k < 4; k++) {
        /* padding no row matches: no length equals -1, none is >= INT64_MAX bytes */
        lits[k].len = prefix ? INT64_MAX : -1;
    }
    ctx_t ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.lits = lits;
    ctx.nlits = nlits;
    for (int m = 0; m <= 8; m++) {
        memset((unsigned char *)&ctx.kmask[m], 0xFF, (size_t)(m < 7 ? m : 7));
        ((unsigned char *)&ctx.ktag[m])[7] = (unsigned char)m;
    }
    uint64_t empty = 0;
    ((unsigned char *)&empty)[7] = 0xFF;
    int short_keys = !prefix && nlits > 1;
    for (Py_ssize_t k = 0; k < nlits; k++) {
        short_keys &= lits[k].len <= 7;
    }
    kernel_t kernel = kernels[width == 8][prefix != 0][any_long][nlits == 1 ? 1 : nlits <= 4 ? 2 : 0];
    if (short_keys) {
        keys = PyMem_Malloc((size_t)nlits * sizeof(uint64_t));
        if (keys == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t k = 0; k < nlits; k++) {
            keys[k] = lits[k].word | ctx.ktag[lits[k].len];
        }
        int built = build_hash(&ctx, keys, empty, &table);
        if (built < 0) {
            goto done;
        }
        if (built) {
            kernel = width == 8 ? hash64 : hash32;
        }
    }
    const char *off = (const char *)offsets_buf.buf + (size_t)offset * (size_t)width;
    unsigned char *out = (unsigned char *)out_buf.buf;
    Py_BEGIN_ALLOW_THREADS
    bad_row = width == 8 ? validate64(off, length) : validate32(off, length);
    if (bad_row < 0) {
        kernel(off, length, data, data_len, &ctx, out);
    }
    Py_END_ALLOW_THREADS
    if (bad_row >= 0) {
        PyErr_Format(PyExc_ValueError, "offsets decrease at row %zd", offset + bad_row);
        goto done;
    }
    result = Py_NewRef(Py_None);

done:
    PyMem_Free(lits);
    PyMem_Free(table);
    PyMem_Free(keys);
    PyBuffer_Release(&offsets_buf);
    PyBuffer_Release(&data_buf);
    PyBuffer_Release(&out_buf);
    return result;
}

static PyMethodDef methods[] = {
    {"match", match, METH_VARARGS, match_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "amqp_jms.selector._strkernels",
    "One-pass string equality / IN / prefix kernels over Arrow string buffers (optional).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__strkernels(void)
{
    return PyModule_Create(&module);
}
