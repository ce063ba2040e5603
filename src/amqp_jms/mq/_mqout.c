/* Optional accelerator of the outgoing MQ mapping: an MQMD (version 2), an RFH2 and the body
 * written into one bytes object, instead of a struct pack per structure, a str encode per folder
 * and joins of the pieces.
 *
 * It checks everything it writes (integer ranges, byte field lengths, character field widths,
 * UTF-8 encodability) and returns None when anything is not what it handles: the Python path
 * (mqmd.MQMD.pack, rfh2.rfh2_bytes) then does the work and raises the MQFormatError naming the
 * field, so errors are reported by one piece of code only. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MQMD_V2_LENGTH 364
#define RFH2_FIXED_LENGTH 36
#define MD_FIELDS 27

/* MQMD version 2 after StrucId, Version to MsgFlags: kind ('l' MQLONG, 'c' MQCHAR, 'b' MQBYTE), width, offset. */
static const struct {
    char kind;
    int width;
    int offset;
} md_layout[MD_FIELDS] = {
    {'l', 4, 4},    {'l', 4, 8},    {'l', 4, 12},   {'l', 4, 16},   {'l', 4, 20},   {'l', 4, 24},
    {'l', 4, 28},   {'c', 8, 32},   {'l', 4, 40},   {'l', 4, 44},   {'b', 24, 48},  {'b', 24, 72},
    {'l', 4, 96},   {'c', 48, 100}, {'c', 48, 148}, {'c', 12, 196}, {'b', 32, 208}, {'c', 32, 240},
    {'l', 4, 272},  {'c', 28, 276}, {'c', 8, 304},  {'c', 8, 312},  {'c', 4, 320},  {'b', 24, 324},
    {'l', 4, 348},  {'l', 4, 352},  {'l', 4, 356},
};
/* the 28th field, OriginalLength, is the last MQLONG at offset 360 */

static void put_long(char *out, int32_t v, int big) {
    uint32_t u = (uint32_t)v;
    if (big) {
        out[0] = (char)(u >> 24);
        out[1] = (char)(u >> 16);
        out[2] = (char)(u >> 8);
        out[3] = (char)u;
    } else {
        out[0] = (char)u;
        out[1] = (char)(u >> 8);
        out[2] = (char)(u >> 16);
        out[3] = (char)(u >> 24);
    }
}

/* An MQLONG from a Python int: 0 and *ok = 0 when it is not an int or does not fit 32 bits. */
static int32_t get_long(PyObject *o, int *ok) {
    int overflow = 0;
    long long v;
    if (!PyLong_Check(o)) {
        *ok = 0;
        return 0;
    }
    v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred()) || v < INT32_MIN || v > INT32_MAX) {
        PyErr_Clear();
        *ok = 0;
        return 0;
    }
    return (int32_t)v;
}

/* A str's UTF-8 (NULL, error cleared, when it is not a str or holds lone surrogates). */
static const char *utf8(PyObject *o, Py_ssize_t *len) {
    const char *s;
    if (!PyUnicode_Check(o)) {
        return NULL;
    }
    s = PyUnicode_AsUTF8AndSize(o, len);
    if (s == NULL) {
        PyErr_Clear();
    }
    return s;
}

/* A blank-padded MQCHAR field: 0 when the value is not a str, not UTF-8 or too wide. */
static int put_char(char *out, PyObject *o, Py_ssize_t width) {
    Py_ssize_t n;
    const char *s = utf8(o, &n);
    if (s == NULL || n > width) {
        return 0;
    }
    memcpy(out, s, (size_t)n);
    memset(out + n, ' ', (size_t)(width - n));
    return 1;
}

static int write_md(char *out, PyObject *md, int big) {
    int i, ok = 1;
    memcpy(out, "MD  ", 4);
    for (i = 0; i < MD_FIELDS; i++) {
        PyObject *v = PyTuple_GET_ITEM(md, i);
        char *at = out + md_layout[i].offset;
        if (md_layout[i].kind == 'l') {
            int32_t x = get_long(v, &ok);
            if (!ok) {
                return 0;
            }
            put_long(at, x, big);
        } else if (md_layout[i].kind == 'c') {
            if (!put_char(at, v, md_layout[i].width)) {
                return 0;
            }
        } else {
            if (!PyBytes_Check(v) || PyBytes_GET_SIZE(v) != md_layout[i].width) {
                return 0;
            }
            memcpy(at, PyBytes_AS_STRING(v), (size_t)md_layout[i].width);
        }
    }
    {
        int32_t x = get_long(PyTuple_GET_ITEM(md, MD_FIELDS), &ok);
        if (!ok) {
            return 0;
        }
        put_long(out + 360, x, big);
    }
    return 1;
}

PyDoc_STRVAR(assemble_doc,
    "assemble(big_endian, md, rfh2, folders, body, /) -> bytes | None\n\n"
    "MQMD (``md``: the 28 field values of a version 2 MQMD, Version first) in the given byte\n"
    "order, then, when ``rfh2`` is ``(Encoding, CodedCharSetId, Format)``, an RFH2 with\n"
    "NameValueCCSID 1208 holding ``folders`` (str or bytes, UTF-8, blank padded to multiples of\n"
    "4), then ``body``. None when a value is not one this writes (the Python path decides).");

static PyObject *assemble(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *md, *rfh, *folders, *body, *result;
    const char **texts = NULL;
    Py_ssize_t *lens = NULL;
    Py_ssize_t nfolders = 0, i, total, rfh_len = 0, body_len;
    int big, ok = 1;
    int32_t r_enc = 0, r_ccsid = 0;
    char *out;
    char fmt[8];

    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "assemble() takes 5 arguments");
        return NULL;
    }
    big = PyObject_IsTrue(args[0]);
    if (big < 0) {
        return NULL;
    }
    md = args[1];
    rfh = args[2];
    folders = args[3];
    body = args[4];
    if (!PyTuple_Check(md) || PyTuple_GET_SIZE(md) != MD_FIELDS + 1 || !PyBytes_Check(body)) {
        Py_RETURN_NONE;
    }
    {
        int32_t version = get_long(PyTuple_GET_ITEM(md, 0), &ok);
        if (!ok || version != 2) {
            Py_RETURN_NONE;
        }
    }
    body_len = PyBytes_GET_SIZE(body);
    total = MQMD_V2_LENGTH;
    if (rfh != Py_None) {
        if (!PyTuple_Check(rfh) || PyTuple_GET_SIZE(rfh) != 3 || !PyList_Check(folders)) {
            Py_RETURN_NONE;
        }
        r_enc = get_long(PyTuple_GET_ITEM(rfh, 0), &ok);
        r_ccsid = get_long(PyTuple_GET_ITEM(rfh, 1), &ok);
        if (!ok || !put_char(fmt, PyTuple_GET_ITEM(rfh, 2), 8)) {
            Py_RETURN_NONE;
        }
        nfolders = PyList_GET_SIZE(folders);
        texts = PyMem_Malloc(sizeof(*texts) * (size_t)(nfolders ? nfolders : 1));
        lens = PyMem_Malloc(sizeof(*lens) * (size_t)(nfolders ? nfolders : 1));
        if (texts == NULL || lens == NULL) {
            PyMem_Free(texts);
            PyMem_Free(lens);
            return PyErr_NoMemory();
        }
        rfh_len = RFH2_FIXED_LENGTH;
        for (i = 0; i < nfolders; i++) {
            PyObject *f = PyList_GET_ITEM(folders, i);
            if (PyBytes_Check(f)) {
                texts[i] = PyBytes_AS_STRING(f);
                lens[i] = PyBytes_GET_SIZE(f);
            } else {
                texts[i] = utf8(f, &lens[i]);
                if (texts[i] == NULL) {
                    goto none;
                }
            }
            /* 4 for the NameValueLength, then the folder blank padded to a multiple of 4 */
            if (lens[i] > INT32_MAX - 8 || rfh_len > INT32_MAX - 8 - lens[i]) {
                goto none;
            }
            rfh_len += 4 + lens[i] + (-lens[i] & 3);
        }
    }
    if (body_len > PY_SSIZE_T_MAX - total - rfh_len) {
        goto none;
    }
    total += rfh_len + body_len;
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result == NULL) {
        PyMem_Free(texts);
        PyMem_Free(lens);
        return NULL;
    }
    out = PyBytes_AS_STRING(result);
    if (!write_md(out, md, big)) {
        Py_DECREF(result);
        goto none;
    }
    out += MQMD_V2_LENGTH;
    if (rfh != Py_None) {
        memcpy(out, "RFH ", 4);
        put_long(out + 4, 2, big);
        put_long(out + 8, (int32_t)rfh_len, big);
        put_long(out + 12, r_enc, big);
        put_long(out + 16, r_ccsid, big);
        memcpy(out + 20, fmt, 8);
        put_long(out + 28, 0, big);
        put_long(out + 32, 1208, big);
        out += RFH2_FIXED_LENGTH;
        for (i = 0; i < nfolders; i++) {
            Py_ssize_t pad = -lens[i] & 3;
            put_long(out, (int32_t)(lens[i] + pad), big);
            memcpy(out + 4, texts[i], (size_t)lens[i]);
            memset(out + 4 + lens[i], ' ', (size_t)pad);
            out += 4 + lens[i] + pad;
        }
    }
    memcpy(out, PyBytes_AS_STRING(body), (size_t)body_len);
    PyMem_Free(texts);
    PyMem_Free(lens);
    return result;

none:
    PyMem_Free(texts);
    PyMem_Free(lens);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"assemble", (PyCFunction)(void (*)(void))assemble, METH_FASTCALL, assemble_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mqout", "Assembling the MQMD, RFH2 and body of outgoing MQ messages.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mqout(void) { return PyModule_Create(&module); }
