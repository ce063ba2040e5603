def assemble(
    big_endian: bool,
    md: tuple[object, ...],
    rfh2: tuple[int, int, str] | None,
    folders: list[str | bytes],
    body: bytes,
    /,
) -> bytes | None: ...
