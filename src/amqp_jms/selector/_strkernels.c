/* Optional accelerator for the selector's string tests (arrow_strings.py has the numpy fallback).
 *
 * One pass over an Arrow string array's offsets buffer and data buffer answers, for every row,
 * whether its bytes equal one of a few literals (``=``, ``IN``) or start with one (prefix
 * ``LIKE``). numpy cannot load a word at an arbitrary byte offset in one step (two aligned gathers
 * and shifts: ~3 ns per row), Arrow's kernels test row by row through branches that mispredict on
 * mixed lengths; here each row costs two offset loads, one unaligned 8-byte load and, per literal,
 * a branch-free length test and masked word compare (literals over 8 bytes compare the rest with
 * memcmp, only on rows whose first 8 bytes and length already match).
 *
 * Every size and offset comes from user data, so nothing is trusted: the offsets buffer must hold
 * offset + length + 1 entries, the first offset must be >= 0, the last <= the data buffer's size,
 * and the loop checks each row's offsets are non-decreasing (a decreasing pair stops it and
 * raises ValueError). Under those checks every byte read lies inside the data buffer: the 8-byte
 * load is only taken when 8 bytes remain, else the remaining bytes are copied into a zeroed word.
 * The GIL is released around the loop (the buffers are held by Py_buffer views).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t word;  /* the literal's first (up to) 8 bytes, in memory order, zero padded */
    uint64_t mask;  /* 0xFF in memory order for each of those bytes */
    Py_ssize_t len;
    const unsigned char *rest;  /* bytes 8.. (when len > 8) */
} lit_t;

static inline uint64_t
load_word(const unsigned char *data, int64_t data_len, int64_t start)
{
    uint64_t w = 0;
    if (data_len - start >= 8) {
        memcpy(&w, data + start, 8);
    } else if (data_len > start) {
        memcpy(&w, data + start, (size_t)(data_len - start));
    }
    return w;
}

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

#define MATCH_LOOP(OFF_T)                                                                         \
    do {                                                                                          \
        const char *off = (const char *)offsets_buf.buf + (size_t)offset * sizeof(OFF_T);        \
        int64_t prev = first;                                                                     \
        for (Py_ssize_t i = 0; i < length; i++) {                                                 \
            int64_t start = prev, end = LOAD_OFF(OFF_T, off, i + 1);                              \
            /* start lies in [0, data_len]: one unsigned compare rejects end < start and          \
               end > data_len (a decreasing pair further on must not let a row run past it) */    \
            if ((uint64_t)(end - start) > (uint64_t)(data_len - start)) {                         \
                bad_row = i;                                                                      \
                break;                                                                            \
            }                                                                                     \
            prev = end;                                                                           \
            int64_t n = end - start;                                                              \
            uint64_t w = load_word(data, data_len, start);                                        \
            int hit = 0;                                                                          \
            for (Py_ssize_t k = 0; k < nlits; k++) {                                              \
                const lit_t *l = &lits[k];                                                        \
                int ok = (prefix ? n >= l->len : n == l->len) & ((w & l->mask) == l->word);       \
                if (l->len > 8 && ok) {                                                           \
                    ok = memcmp(data + start + 8, l->rest, (size_t)(l->len - 8)) == 0;            \
                }                                                                                 \
                hit |= ok;                                                                        \
            }                                                                                     \
            out[i] = (unsigned char)hit;                                                          \
        }                                                                                         \
    } while (0)

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
    lits = PyMem_Calloc(nlits ? (size_t)nlits : 1, sizeof(lit_t));
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

    unsigned char *out = (unsigned char *)out_buf.buf;
    Py_BEGIN_ALLOW_THREADS
    if (width == 4) {
        MATCH_LOOP(int32_t);
    } else {
        MATCH_LOOP(int64_t);
    }
    Py_END_ALLOW_THREADS
    if (bad_row >= 0) {
        PyErr_Format(PyExc_ValueError, "offsets decrease or run past the data buffer at row %zd", offset + bad_row);
        goto done;
    }
    result = Py_NewRef(Py_None);

done:
    PyMem_Free(lits);
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
