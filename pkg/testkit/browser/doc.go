// Package browser runs a real headless Chromium for tests of the console
// page, driven from Go over the DevTools protocol with chromedp. The
// browser talks to loopback only, starts from a fresh profile, and is
// stopped when the test ends. It records what a page must never do
// unnoticed: JavaScript dialogs (alert, confirm, prompt), which it
// dismisses, uncaught exceptions and console errors.
package browser
