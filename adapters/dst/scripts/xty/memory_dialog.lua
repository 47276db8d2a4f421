-- The server's confirmation question and its announcements (v1.md "memory.confirm.request",
-- "memory.confirm", "memory.notice"), for a client of xty.client:
--
--   require("xty.memory_dialog").attach(client, {
--       ask = function(question, request, answer) ShowPopup(question, function(yes) answer(yes) end) end,
--       show = function(text, notice) ChatHistory:AddToHistory(text) end,
--   })
--
-- ask: a forget the companion previewed; show question (request.saves, request.itemCount say what
-- goes) and call answer(true) or answer(false) once the player chose. show: something was deleted
-- or restored; text says what went, how to undo it and until when. Other frames go on to the
-- client's on_frame as before.
local Dialog = {}

-- Send the player's answer to the dialog of confirm_id (a yes deletes at once; a no voids it).
function Dialog.answer(client, confirm_id, yes)
    client:send({
        type = "memory.confirm", id = client:id("confirm"), confirmId = confirm_id,
        answer = yes and "yes" or "no",
    })
end

function Dialog.attach(client, opts)
    local previous = client.on_frame
    client.on_frame = function(frame)
        if frame.type == "memory.confirm.request" then
            opts.ask(frame.question, frame, function(yes) Dialog.answer(client, frame.confirmId, yes) end)
        elseif frame.type == "memory.notice" then
            opts.show(frame.text, frame)
        else
            previous(frame)
        end
    end
end

return Dialog
