"""Reading QR codes back from pixels, as a phone's camera app would."""

from __future__ import annotations

import io

from tests.support.availability import unavailable


def read_qr(png: bytes) -> list[str]:
    """The texts of every QR code in a PNG, read by zxing-cpp.

    Only QR codes are looked for: with every format on, zxing-cpp once also read a QR
    code's module rows as a linear barcode ("1213", seen under CI), which no camera app
    pointed at a QR code would offer.
    """
    try:
        import zxingcpp  # requirements-dev.txt
    except ImportError:
        unavailable("zxing-cpp is not installed: pip install -r requirements-dev.txt")
    from PIL import Image

    found = zxingcpp.read_barcodes(
        Image.open(io.BytesIO(png)), formats=zxingcpp.BarcodeFormat.QRCode
    )
    return [r.text for r in found]
