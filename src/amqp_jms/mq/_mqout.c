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
#include <math.h>
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

/* ---- the usr folder: the common property types written straight to UTF-8 */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} buffer;

static int grow(buffer *b, Py_ssize_t more) {
    Py_ssize_t cap;
    char *data;
    if (more > PY_SSIZE_T_MAX / 2 - b->len) {
        return 0;
    }
    if (b->len + more <= b->cap) {
        return 1;
    }
    cap = (b->len + more) * 2;
    data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        return 0;
    }
    b->data = data;
    b->cap = cap;
    return 1;
}

static int put(buffer *b, const char *s, Py_ssize_t n) {
    if (!grow(b, n)) {
        return 0;
    }
    memcpy(b->data + b->len, s, (size_t)n);
    b->len += n;
    return 1;
}

/* Whether a str needs no escaping and holds only characters XML 1.0 can carry: none of
 * ``& < > \r``, C0 controls other than tab and newline, U+FFFE, U+FFFF or surrogates
 * (xmlfolder._NEEDS_WORK finds none). */
static int plain_text(PyObject *s) {
    Py_ssize_t i, n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x20) {
            if (c != '\t' && c != '\n') {
                return 0;
            }
        } else if (c == '&' || c == '<' || c == '>' || c == 0xFFFE || c == 0xFFFF ||
                   (c >= 0xD800 && c <= 0xDFFF)) {
            return 0;
        }
    }
    return 1;
}

/* ``<name`` + what xmlfolder.fast_parts writes + ``</name>`` for one property; 0 when the value
 * is not one it writes (the Python path decides), -1 on a memory error. */
static int put_property(buffer *b, const char *name, Py_ssize_t name_len, PyObject *v, PyObject *dts) {
    PyTypeObject *t = Py_TYPE(v);
    char digits[32];
    Py_ssize_t n;
    const char *s;
    if (!put(b, "<", 1) || !put(b, name, name_len)) {
        return -1;
    }
    if (t == &PyUnicode_Type) {
        if (!plain_text(v) || (s = utf8(v, &n)) == NULL) {
            return 0;
        }
        if (!put(b, ">", 1) || !put(b, s, n)) {
            return -1;
        }
    } else if (t == &PyBool_Type) {
        if (!put(b, v == Py_True ? " dt=\"boolean\">1" : " dt=\"boolean\">0", 15)) {
            return -1;
        }
    } else if (t == &PyBytes_Type) {
        static const char hex[] = "0123456789ABCDEF";
        Py_ssize_t i, size = PyBytes_GET_SIZE(v);
        const unsigned char *raw = (const unsigned char *)PyBytes_AS_STRING(v);
        if (size > PY_SSIZE_T_MAX / 4 || !put(b, " dt=\"bin.hex\">", 14) || !grow(b, 2 * size)) {
            return -1;
        }
        for (i = 0; i < size; i++) {
            b->data[b->len++] = hex[raw[i] >> 4];
            b->data[b->len++] = hex[raw[i] & 15];
        }
    } else {
        PyObject *dt = PyDict_GetItemWithError(dts, (PyObject *)t);
        if (dt == NULL) {
            PyErr_Clear();
            return 0;
        }
        if ((s = utf8(dt, &n)) == NULL || !put(b, s, n) || !put(b, ">", 1)) {
            return s == NULL ? 0 : -1;
        }
        if (PyLong_Check(v)) {
            int overflow = 0;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || (x == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                return 0; /* outside an i8: the Python path raises */
            }
            n = snprintf(digits, sizeof digits, "%lld", x);
            if (!put(b, digits, n)) {
                return -1;
            }
        } else if (PyFloat_Check(v)) {
            double x = PyFloat_AS_DOUBLE(v);
            char *text;
            int ok;
            if (!isfinite(x)) {
                return 0; /* NaN and the infinities have their own spellings */
            }
            text = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
            if (text == NULL) {
                return -1;
            }
            ok = put(b, text, (Py_ssize_t)strlen(text));
            PyMem_Free(text);
            if (!ok) {
                return -1;
            }
        } else {
            return 0;
        }
    }
    if (!put(b, "</", 2) || !put(b, name, name_len) || !put(b, ">", 1)) {
        return -1;
    }
    return 1;
}

PyDoc_STRVAR(usr_folder_doc,
    "usr_folder(props, good_names, dts, /) -> bytes | None\n\n"
    "The UTF-8 ``<usr>`` folder of application properties whose names are all in ``good_names``\n"
    "(checked before) and whose values are plain str, bool, bytes or of a type ``dts`` maps to\n"
    "its `` dt=\"..\"`` (64-bit ints, finite floats); None for anything else.");

static PyObject *usr_folder(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *props, *good, *dts, *name, *value, *result;
    Py_ssize_t pos = 0, name_len;
    buffer b = {NULL, 0, 0};
    const char *s;

    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "usr_folder() takes 3 arguments");
        return NULL;
    }
    props = args[0];
    good = args[1];
    dts = args[2];
    if (!PyDict_Check(props) || !PyAnySet_Check(good) || !PyDict_Check(dts) || PyDict_GET_SIZE(props) == 0) {
        Py_RETURN_NONE;
    }
    if (!put(&b, "<usr>", 5)) {
        goto nomem;
    }
    while (PyDict_Next(props, &pos, &name, &value)) {
        int found, done;
        if (!PyUnicode_CheckExact(name)) {
            goto none;
        }
        found = PySet_Contains(good, name);
        if (found <= 0) {
            PyErr_Clear();
            goto none;
        }
        if ((s = utf8(name, &name_len)) == NULL) {
            goto none;
        }
        Py_INCREF(name); /* held while a type's lookup could run code that changes props */
        Py_INCREF(value);
        done = put_property(&b, s, name_len, value, dts);
        Py_DECREF(value);
        Py_DECREF(name);
        if (done < 0) {
            goto nomem;
        }
        if (done == 0) {
            goto none;
        }
    }
    if (!put(&b, "</usr>", 6)) {
        goto nomem;
    }
    result = PyBytes_FromStringAndSize(b.data, b.len);
    PyMem_Free(b.data);
    return result;

none:
    PyMem_Free(b.data);
    Py_RETURN_NONE;
nomem:
    PyMem_Free(b.data);
    return PyErr_NoMemory();
}

/* ---- provider message ids */

PyDoc_STRVAR(provider_id_doc,
    "provider_id(value, /) -> bytes | None\n\n"
    "The 24 bytes of ``ID:`` + 48 lower-case hex digits (not all zeros), else None.");

static int hex_digit(Py_UCS1 c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

static PyObject *provider_id(PyObject *self, PyObject *value) {
    const Py_UCS1 *s;
    char raw[24];
    int i, any = 0;
    (void)self;
    if (!PyUnicode_Check(value) || PyUnicode_GET_LENGTH(value) != 51 || !PyUnicode_IS_ASCII(value)) {
        Py_RETURN_NONE;
    }
    s = PyUnicode_1BYTE_DATA(value);
    if (s[0] != 'I' || s[1] != 'D' || s[2] != ':') {
        Py_RETURN_NONE;
    }
    for (i = 0; i < 24; i++) {
        int hi = hex_digit(s[3 + 2 * i]), lo = hex_digit(s[4 + 2 * i]);
        if (hi < 0 || lo < 0) {
            Py_RETURN_NONE;
        }
        raw[i] = (char)(hi << 4 | lo);
        any |= raw[i];
    }
    if (!any) {
        Py_RETURN_NONE; /* all zeros is MQMI_NONE: "no id" to MQ */
    }
    return PyBytes_FromStringAndSize(raw, 24);
}

static PyMethodDef methods[] = {
    {"assemble", (PyCFunction)(void (*)(void))assemble, METH_FASTCALL, assemble_doc},
    {"usr_folder", (PyCFunction)(void (*)(void))usr_folder, METH_FASTCALL, usr_folder_doc},
    {"provider_id", provider_id, METH_O, provider_id_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mqout", "Assembling the MQMD, RFH2 and body of outgoing MQ messages.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mqout(void) { return PyModule_Create(&module); }
