// Shared helpers of the annotate and browse pages. No network beyond this page's own server.
"use strict";

// GET or POST JSON; resolves to the parsed body, rejects with the server's error message.
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new Error("the server does not answer (stopped?)");
  }
  const value = await response.json().catch(() => ({error: "bad answer from the server"}));
  if (!response.ok) throw new Error(value.error || ("HTTP " + response.status));
  return value;
}

// Build an element: el("li", {class: "x", dataset: {k: "1"}, onclick: f}, [child, "text"]).
function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children || []) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// CSS colour class of a group label: g1..g9 for "1".."9", gx otherwise.
function groupClass(label) {
  return /^[1-9]$/.test(label) ? "g" + label : "gx";
}

function setStatus(text, isError) {
  const node = document.getElementById("status");
  node.textContent = text;
  node.classList.toggle("error", !!isError);
}

// True when a key press is meant for a text field, not for the page's shortcuts.
function typingIn(event) {
  const t = event.target;
  return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
}
