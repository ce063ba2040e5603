def assemble(
    big_endian: bool,
    md: tuple[object, ...],
    rfh2: tuple[int, int, str] | None,
    folders: list[str | bytes],
    body: bytes,
    /,
) -> bytes | None: ...
def xml_elements(
    kind: int, values: dict[str, object] | list[object], good_names: set[str], dts: dict[type, str], /
) -> bytes | None: ...
def provider_id(value: str, /) -> bytes | None: ...
