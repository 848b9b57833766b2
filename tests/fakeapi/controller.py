"""The loop every level-triggered controller of the fake shares: woken by a store change of the
kinds it watches (or by its period running out), it clears the wake and runs one full pass,
`sync()`, over the store; a pass that raises is printed and the next wake tries again. The
kubelet, the Job controller and the Service proxy are such controllers (the Deployment
controller is keyed: it has its own work queue in controllers.py).

A subclass sets `name` (the thread's), `watches` (resource keys whose changes wake it) and
`period` (the longest sleep between passes), or overrides `timeout()` when the sleep depends on
the clock, and implements `sync()`; `finish()` runs once when the loop ends.
"""

import threading
import traceback


class Controller:
    name = "controller"
    watches = ()
    period = 1.0

    def __init__(self, api, stop):
        self.api = api
        self.store = api.store
        self.stop = stop
        self.wake = threading.Event()
        self.thread = None
        self.store.listeners.append(self._on_change)

    def _on_change(self, key, etype, obj, old):
        if key in self.watches:
            self.wake.set()

    def kick(self):
        """Run a pass soon, as a watched change would."""
        self.wake.set()

    def start(self):
        self.thread = threading.Thread(target=self.run, name=self.name, daemon=True)
        self.thread.start()

    def timeout(self):
        """Seconds to sleep before the next pass when nothing wakes the loop."""
        return self.period

    def run(self):
        while not self.stop.is_set():
            self.wake.wait(self.timeout())
            self.wake.clear()
            try:
                self.sync()
            except Exception:
                traceback.print_exc()
        self.finish()

    def sync(self):
        raise NotImplementedError

    def finish(self):
        pass
