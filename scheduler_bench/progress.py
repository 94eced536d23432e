"""A progress bar on stderr for the long steps of a benchmark.

On a terminal it redraws one line (at most 10 times a second); when
stderr is a file or a pipe it writes a line per 10% step instead, so logs
stay short. ``Progress(total=None)`` counts without a bar.

    with Progress('populate', total=100000) as bar:
        for chunk in chunks:
            ...
            bar.update(len(chunk))
"""

import sys
import time

_WIDTH = 30
_REDRAW = 0.1


class Progress:

    def __init__(self, label, total=None, stream=None, enabled=True):
        self.label = label
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, 'isatty', lambda: False)())
        self.started = time.monotonic()
        self._drawn = 0.0
        self._step = -1

    def update(self, count=1):
        self.done += count
        now = time.monotonic()
        if not self.enabled:
            return
        if self.tty:
            if now - self._drawn >= _REDRAW:
                self._drawn = now
                self._write('\r' + self.line(now) + '\x1b[K')
        elif self.total:
            step = int(10 * self.done / self.total)
            if step != self._step and step < 10:
                self._step = step
                self._write(self.line(now) + '\n')

    def line(self, now=None):
        elapsed = (now or time.monotonic()) - self.started
        if not self.total:
            return '%s: %d done, %.1fs' % (self.label, self.done, elapsed)
        share = min(self.done / self.total, 1.0)
        filled = int(_WIDTH * share)
        eta = elapsed / share - elapsed if share > 0 else 0.0
        return '%s [%s%s] %3d%% %d/%d %.1fs eta %.0fs' % (
            self.label, '#' * filled, '.' * (_WIDTH - filled),
            int(100 * share), self.done, self.total, elapsed, eta)

    def close(self):
        if not self.enabled:
            return
        line = self.line()
        self._write(('\r' + line + '\x1b[K\n') if self.tty else line + '\n')

    def _write(self, text):
        self.stream.write(text)
        self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
