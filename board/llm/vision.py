UNSEEN_IMAGE = "[an image was attached that this model cannot see]"
def sees_images(model, extra=()):
    return True
